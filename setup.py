"""Packaging: the code's homes installed under the one import namespace `pccbullet`. The table
`[tool.pccbullet.homes]` of pyproject.toml maps each installed package to its folder: `api/` is `pccbullet`
itself (ARCHITECTURE.md says why: no folder in a checkout is named `pccbullet`, so none can shadow the
installed package), `sim/`, `teleop/`, `urdf_gen/` and `assets/` are the subpackages of their names, and
`urdf_gen/core/` is `pccbullet.core`. Metadata lives in pyproject.toml; only what pyproject.toml cannot say
is here: the mapping and the package list, found in each home (a new subpackage needs no edit).
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

PYPROJECT = tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text(encoding="utf-8"))
HOMES: dict[str, str] = PYPROJECT["tool"]["pccbullet"]["homes"]

packages: list[str] = []
for name, folder in HOMES.items():
    # a folder inside this one that is a home of its own is not a subpackage of this one
    inner = [
        other[len(folder) + 1 :].replace("/", ".")
        for other in HOMES.values()
        if other.startswith(folder + "/")
    ]
    excluded = [pattern for sub in inner for pattern in (sub, sub + ".*")]
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder, exclude=excluded)]

setup(
    packages=packages,
    package_dir=dict(HOMES),
    package_data={
        "pccbullet": ["py.typed"],
        "pccbullet.assets": ["robots/*.toml", "experiments/*.toml", "poses/*.toml"],
        "pccbullet.sim.views.web": ["page/*.html", "page/*.js", "page/vendor/*"],  # the web view's page
    },
    include_package_data=False,
)
