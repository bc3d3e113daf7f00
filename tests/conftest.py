"Hypothesis profiles: `ci` (the default: fixed examples, a few minutes for the whole suite) and `long` (HYPOTHESIS_PROFILE=long)"
import os
from pathlib import Path
from hypothesis import HealthCheck, settings

# hypothesis keeps its caches outside the repository, beside the hosts' (a clean clone stays clean)
_cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home()/'.cache')/'llmsurgery'/'hypothesis'
os.environ.setdefault('HYPOTHESIS_STORAGE_DIRECTORY', str(_cache))

_slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large]
# `ci` fixes the examples (derandomize) so a CI run is reproducible; tests may still lower max_examples for expensive properties
settings.register_profile('ci', derandomize=True, deadline=None, max_examples=100, suppress_health_check=_slow_ok, print_blob=True)
# `long` explores: fresh random examples every run, many of them
settings.register_profile('long', deadline=None, max_examples=2000, suppress_health_check=_slow_ok, print_blob=True)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))

import atexit, shutil, tempfile
# importing pyskills (tests/test_skill.py does, as it is collected) makes its folder in XDG_DATA_HOME: never the real one.
# tools/test.sh sets a temporary one for the notebooks too; a bare `pytest` gets its own here
if not os.environ.get('XDG_DATA_HOME'):
    os.environ['XDG_DATA_HOME'] = _data = tempfile.mkdtemp(prefix='llmsurgery-test-data.')
    atexit.register(shutil.rmtree, _data, True)
# nor is Pi's agent folder ever the real ~/.pi/agent, for tests that move only some hosts' stores
os.environ['PI_CODING_AGENT_DIR'] = _pi = tempfile.mkdtemp(prefix='llmsurgery-test-pi.')
atexit.register(shutil.rmtree, _pi, True)

import pytest

@pytest.fixture(scope='session')
def hosts():
    "(claude, codex) binaries, installed once into the cache; no npm registry fails the tests that use them, never skips"
    from hostkit import install_hosts
    return install_hosts()

import re, warnings
_fork_warning = re.compile(r'This process \(pid=\d+\) is multi-threaded, use of fork\(\) may lead to deadlocks')

@pytest.fixture(autouse=True)
def no_fork_beside_threads():
    "A fork in a process with another thread fails the test: Python 3.12 only warns (and `-W error` can't raise it), so each test's warnings are read"
    with warnings.catch_warnings(record=True) as got:
        warnings.filterwarnings('always', message=_fork_warning.pattern, category=DeprecationWarning)
        yield
    bad = [w for w in got if _fork_warning.search(str(w.message))]
    for w in got:   # the others go on to pytest's own summary
        if w not in bad: warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    assert not bad, f'fork() in a multi-threaded process at {bad[0].filename}:{bad[0].lineno}'
