"""Package discovery, beside pyproject.toml (which holds everything else).

The top-level ``resources/`` folder is shipped as the ``skillstudio.resources`` package so the
same ``importlib.resources`` lookup works in a checkout, an editable install and a wheel; that
mapping is the one thing pyproject.toml's automatic discovery cannot express.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["skillstudio", "skillstudio.*"]), "skillstudio.resources"],
    package_dir={"skillstudio.resources": "resources"},
)
