"""Suite-wide settings, and the two tiers (fast, live) of tests/tiers.py.

Under CI (the CI environment variable is set by .ci/run's runner) hypothesis runs
derandomized: the examples are a fixed function of the code, so CI is reproducible,
while developers' runs keep exploring new random examples (and keep failures in the
local example database).
"""

import os

from hypothesis import settings
from tiers import (  # noqa: F401 (the hooks of the tiers)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
