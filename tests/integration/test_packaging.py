"""A non-editable install works: the wheel carries the demo data, and `taggraph bench` runs from
another folder with the installed package, not the source checkout.

The fresh virtualenv gets taggraph only from the wheel; its dependencies come from the
project's venv through a .pth line (they are the same versions, and reinstalling torch,
spaCy and the rest would cost CI minutes). That venv's editable-install hook is a .pth
file inside a folder added by a path line, so Python does not run it: the checkout
stays invisible.
"""

import json
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    return next(out.glob("taggraph-*.whl"))


def test_wheel_carries_the_demo_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "taggraph/_data/demo/longmemeval_demo.json" in names
    assert not [n for n in names if n.startswith(("tests/", "notebooks/", "benchmarks/"))]


def test_wheel_carries_every_module_and_data_file_of_the_package(wheel):
    """The wheel's taggraph/ is the files git tracks there (modules, the published reply schema, the demo): none
    missing, none left over from an old layout (a stale build/ folder)."""
    tracked = set(subprocess.run(["git", "ls-files", "taggraph"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("taggraph/")}
    assert tracked and shipped == tracked, (sorted(tracked - shipped), sorted(shipped - tracked))


def test_installed_wheel_runs_bench_on_the_demo_from_another_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=300)
    fresh_site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    deps = [p for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]] if Path(p).is_dir()]
    (Path(fresh_site) / "project_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run([str(py), "-c", "import taggraph; print(taggraph.__file__)"], cwd=elsewhere,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(fresh_site), where
    res = subprocess.run([str(venv / "bin" / "taggraph"), "bench", "--methods", "BM25", "--limit", "2",
                          "--out", "run"], cwd=elsewhere, capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TQDM_DISABLE": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    run = json.loads((elsewhere / "run" / "run.json").read_text())
    assert run["data"]["path"].endswith("taggraph/_data/demo/longmemeval_demo.json")
    assert run["data"]["path"].startswith(fresh_site) and run["git_commit"] == "unknown"
