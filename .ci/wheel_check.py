"""The install a user does: build the wheel, install it into a fresh venv, and from a folder outside the
repository run the command line's main jobs and check the files they write.

Usage: ``python .ci/wheel_check.py`` from anywhere (exit status 0 when every check passed). Prints one line a
check and a closing ``N passed, N failed`` line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import layout  # noqa: E402  (tests/layout.py: the homes of pyproject.toml)


def run(cmd: list[str], cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; raise with its output when it fails."""
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
        )
    return res


def main() -> int:
    passed, failed = 0, 0
    with tempfile.TemporaryDirectory(prefix="pccbullet-wheel-") as tmp_name:
        tmp = Path(tmp_name)
        dist, env, work = tmp / "dist", tmp / "venv", tmp / "work"
        work.mkdir()
        print("wheel check: building the wheel and a fresh venv (a few minutes) ...", flush=True)
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], cwd=tmp)
        wheel = next(dist.glob("pccbullet-*.whl"))
        venv.create(env, with_pip=True)
        py, cli = env / "bin" / "python", env / "bin" / "pccbullet"
        run([str(py), "-m", "pip", "install", "-q", str(wheel)], cwd=tmp)

        def check(name: str, fn: Callable[[], None]) -> None:
            nonlocal passed, failed
            start = time.monotonic()
            try:
                fn()
            except Exception as exc:  # report every failing check, then fail
                failed += 1
                print(f"FAILED {name}: {exc}", flush=True)
            else:
                passed += 1
                print(f"ok     {name} ({time.monotonic() - start:.1f} s)", flush=True)

        def wheel_holds_every_module() -> None:
            names = set(zipfile.ZipFile(wheel).namelist())
            ours = {n for n in names if not n.startswith("pccbullet-")}
            outside = sorted(n for n in ours if not n.startswith("pccbullet/"))
            assert not outside, f"files outside pccbullet/: {outside}"
            missing = [
                layout.installed_path(p)
                for p in layout.source_files((".py", ".toml", ".html", ".js"))
                if layout.installed_path(p) not in names
            ]
            assert not missing, f"not in the wheel: {missing}"
            assert "pccbullet/__init__.py" in names and "pccbullet/py.typed" in names
            assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel"

        def pip_show_lists_only_the_package() -> None:
            files = run([str(py), "-m", "pip", "show", "-f", "pccbullet"], cwd=work).stdout
            listed = [line.strip() for line in files.split("Files:")[1].splitlines() if line.strip()]
            stray = [
                f
                for f in listed
                if not f.startswith(("pccbullet/", "pccbullet-")) and f != "../../../bin/pccbullet"
            ]
            assert listed and not stray, f"installed outside pccbullet/: {stray}"

        def imports() -> None:
            code = (
                "import sys, pccbullet; "
                "assert 'pybullet' not in sys.modules, 'import pccbullet loads pybullet'; "
                "assert pccbullet.__file__.startswith(sys.prefix), pccbullet.__file__; "
                "from importlib.metadata import version; "
                "print(pccbullet.World.__module__, pccbullet.__version__ == version('pccbullet'))"
            )
            out = run([str(py), "-c", code], cwd=work).stdout
            assert "pccbullet.sim.world True" in out, out  # the wheel's metadata carries __version__

        def robots() -> None:
            out = run([str(cli), "robots"], cwd=work).stdout
            assert "ursula" in out and "snake003_exp" in out, out

        def urdf() -> None:
            run([str(cli), "urdf", "ursula", "--out", "u", "--sections", "4"], cwd=work)
            for limb in ("head", "grasper", "palpation", "camera", "light"):
                root = ElementTree.parse(work / "u" / f"ursula_{limb}.urdf").getroot()
                assert root.tag == "robot" and root.findall("link"), limb
            assert list((work / "u" / "meshes").glob("*.stl")), "no meshes"

        def pose() -> None:
            out = run(
                [str(cli), "pose", "ursula", "--limb", "camera", "--bend", "90", "--plane", "30", "--json"],
                cwd=work,
            ).stdout
            result = json.loads(out)
            assert isinstance(result, dict) and result, out
            out = run([str(cli), "pose", "--pose-file", "ursula_fig10", "--json"], cwd=work).stdout
            assert len(json.loads(out)["limbs"]) == 4, out  # a bundled pose file, found by name

        def run_experiment() -> None:
            run([str(cli), "run", "camera_sweep", "--out", "r", "--quiet"], cwd=work)
            for f in ("run.csv", "run.npz", "metadata.json", "manifest.json"):
                assert (work / "r" / f).stat().st_size > 0, f
            meta = json.loads((work / "r" / "metadata.json").read_text())
            assert meta["experiment"] == "camera_sweep", meta["experiment"]

        def demo() -> None:
            run([str(cli), "demo", "--out", "d", "--headless", "--duration", "2"], cwd=work, timeout=3600)
            summary = json.loads((work / "d" / "summary.json").read_text())
            assert summary["mode"] == "headless", summary["mode"]
            for f in ("summary.json", "demo.gif", "camera_tip.png", "tips.png", "metrics.png"):
                assert (work / "d" / f).stat().st_size > 0, f

        check(
            "the wheel holds every module and asset and the LICENSE, nothing outside pccbullet/",
            wheel_holds_every_module,
        )
        check(
            "pip show -f lists only pccbullet/, its metadata and the console script",
            pip_show_lists_only_the_package,
        )
        check("import pccbullet (cheap, from site-packages; __version__ is the metadata's)", imports)
        check("pccbullet robots", robots)
        check("pccbullet urdf ursula", urdf)
        check("pccbullet pose ursula --json, and --pose-file ursula_fig10", pose)
        check("pccbullet run camera_sweep", run_experiment)
        check("pccbullet demo --headless --duration 2", demo)
        leftovers = sorted(p.name for p in work.iterdir() if p.name not in ("u", "r", "d"))
        check("nothing written outside the --out folders", lambda: _assert_empty(leftovers))
        check(
            "the web view serves its page and vendored scripts from site-packages", lambda: web_view(py, work)
        )
    print(f"wheel: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


def web_view(py: Path, work: Path) -> None:
    """Start a web view in the installed package and fetch its page and scripts (no network needed)."""
    code = (
        "import urllib.request, pccbullet as pcb\n"
        "with pcb.WebView() as view:\n"
        "    for path in ('', 'static/app.js', 'static/three.module.min.js', 'static/three.core.min.js',"
        " 'static/OrbitControls.js'):\n"
        "        body = urllib.request.urlopen(f'http://127.0.0.1:{view.port}/{path}', timeout=60).read()\n"
        "        print(path or 'page', len(body))\n"
    )
    out = run([str(py), "-c", code], cwd=work, timeout=600).stdout
    sizes = dict(line.split() for line in out.splitlines())
    assert set(sizes) == {
        "page",
        "static/app.js",
        "static/three.module.min.js",
        "static/three.core.min.js",
        "static/OrbitControls.js",
    }, out
    assert int(sizes["static/three.core.min.js"]) > 100_000, out


def _assert_empty(leftovers: list[str]) -> None:
    assert not leftovers, f"stray files: {leftovers}"


if __name__ == "__main__":
    sys.exit(main())
