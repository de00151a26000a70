"""Packaging: the code's four homes (`sim/`, `teleop/`, `urdf_gen/`, `assets/`) installed under the one import
namespace `pccbullet`, whose own `__init__` (the public API) lives in `api/` (ARCHITECTURE.md says why: no
folder in a checkout is named `pccbullet`, so none can shadow the installed package). Metadata lives in
pyproject.toml; only what pyproject.toml cannot say is here: the mapping and the package list, found in each
home (a new subpackage needs no edit).
"""

from setuptools import find_packages, setup

HOMES = ("sim", "teleop", "urdf_gen", "assets")  # folder name == subpackage name under pccbullet

packages = ["pccbullet"]
package_dir = {"pccbullet": "api"}
for home in HOMES:
    package_dir[f"pccbullet.{home}"] = home
    packages += [f"pccbullet.{home}"] + [f"pccbullet.{home}.{sub}" for sub in find_packages(home)]

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        "pccbullet": ["py.typed"],
        "pccbullet.assets": ["robots/*.toml", "experiments/*.toml", "poses/*.toml"],
        "pccbullet.sim.webview": ["page/*.html", "page/*.js", "page/vendor/*"],  # the web view's page
    },
    include_package_data=False,
)
