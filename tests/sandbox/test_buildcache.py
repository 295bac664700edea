"""The build cache: an identical build is installed, not run again; anything else is built."""

from __future__ import annotations

import threading

import pytest

from truegrade.sandbox import BuildCache, CachedBuild, RunResult, Sandbox

ENV = {"PATH": "/usr/bin:/bin"}
# each real build writes 16 fresh random bytes: a run that sees the same ones saw the same build
BUILD = ["/bin/sh", "-c", "od -An -tx1 -N16 /dev/urandom > out; cat src >> out"]
SHOW = ["/bin/sh", "-c", "cat /tmp/out; ls /tmp"]


def _build(box: Sandbox, cache: BuildCache, src: bytes = b"one\n", **changes):
    files = {"src": src, **changes.pop("files", {})}
    given = {"argv": BUILD, "env": ENV, "timeout_s": 10, **changes}
    return box.build(files, keep=["out"], cache=cache, **given)


def _shown(built) -> str:
    result = built.exec(SHOW, timeout_s=10, env=ENV)
    assert result.status == "exited" and result.exit_code == 0, result
    return result.stdout


def test_an_identical_build_is_installed_not_run_again(box):
    cache = BuildCache()
    first = _build(box, cache)
    again = _build(box, cache)
    assert first.ok and not first.cached
    assert again.ok and again.cached and again.build == first.build
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    shown = _shown(again)
    assert shown.split()[-2:] == ["one", "out"]  # the build's output and nothing else
    assert _shown(_build(box, cache)) == shown  # the same bytes: the build did not run again


@pytest.mark.parametrize(
    "change",
    [
        {"src": b"two\n"},
        {"files": {"extra.h": b"#define X 1\n"}},
        {"argv": [*BUILD[:2], BUILD[2] + " "]},
        {"env": {**ENV, "LANG": "C.UTF-8"}},
        {"timeout_s": 11},
    ],
    ids=["source", "extra file", "flags", "environment", "limits"],
)
def test_any_other_input_is_built_afresh(box, change):
    cache = BuildCache()
    first = _shown(_build(box, cache))
    other = _build(box, cache, **change)
    assert other.ok and not other.cached
    assert _shown(other).split()[:16] != first.split()[:16]
    assert (cache.hits, cache.misses, len(cache)) == (0, 2, 2)


def test_runs_of_a_cached_build_change_nothing_for_the_next(box):
    cache = BuildCache()
    _build(box, cache)
    built = _build(box, cache)
    assert built.cached
    before = _shown(built)
    spoil = "echo changed > /tmp/out; chmod 000 /tmp/out; echo junk > /tmp/junk"
    result = built.exec(["/bin/sh", "-c", spoil], timeout_s=10, env=ENV)
    assert result.status == "exited" and result.exit_code == 0, result
    assert _shown(built) == before  # the next run starts from the build's output again
    assert _shown(_build(box, cache)) == before  # and so does the next install of it


def test_a_failed_build_is_not_kept(box):
    cache = BuildCache()
    argv = ["/bin/sh", "-c", "echo no >&2; exit 3"]
    for _ in range(2):
        failed = _build(box, cache, argv=argv)
        assert not failed.ok and not failed.cached
        assert failed.build.exit_code == 3 and "no" in failed.build.stderr
    nothing = _build(box, cache, argv=["/bin/sh", "-c", "true"])  # made no 'out'
    assert not nothing.ok and not nothing.cached
    assert (cache.hits, cache.misses, len(cache)) == (0, 3, 0)


def test_a_cached_build_serves_another_sandbox_sharing_the_cache(box):
    cache = BuildCache()
    shown = _shown(_build(box, cache))
    with Sandbox(box.config) as other:
        again = _build(other, cache)
        assert again.cached and _shown(again) == shown


def test_a_cached_handle_is_replaced_by_the_next_build_as_any_other(box):
    cache = BuildCache()
    _build(box, cache)
    cached = _build(box, cache)
    _build(box, cache, src=b"two\n")
    result = cached.exec(SHOW, timeout_s=10, env=ENV)
    assert result.status == "sandbox_error"


def _entry(size: int) -> CachedBuild:
    return CachedBuild(RunResult("exited", exit_code=0), (("out", 0o755, b"x" * size),))


def test_the_cache_keeps_to_its_entries_and_bytes_least_recently_used_first():
    cache = BuildCache(max_entries=2, max_bytes=100)
    for key in ("a", "b"):
        assert cache.claim(key, wait_s=0) is None
        cache.finish(key, _entry(40))
    assert cache.claim("a", wait_s=0) is not None  # a is now the most recent
    assert cache.claim("c", wait_s=0) is None
    cache.finish("c", _entry(40))
    assert (len(cache), cache.size, cache.evictions) == (2, 80, 1)
    assert cache.claim("b", wait_s=0) is None  # b went first
    cache.finish("b", None)
    assert cache.claim("d", wait_s=0) is None
    cache.finish("d", _entry(90))  # over the bytes with any other: alone
    assert (len(cache), cache.size) == (1, 90)
    assert cache.claim("e", wait_s=0) is None
    cache.finish("e", _entry(101))  # larger than the whole cache: not kept
    assert (len(cache), cache.size) == (1, 90)
    with pytest.raises(ValueError, match="at least one entry"):
        BuildCache(max_entries=0)


@pytest.mark.parametrize("succeeds", [True, False], ids=["success", "failure"])
def test_a_second_claim_waits_for_the_first_build_of_its_key(succeeds):
    cache = BuildCache()
    assert cache.claim("k", wait_s=0) is None  # this thread builds
    got: list[CachedBuild | None] = []
    waiter = threading.Thread(target=lambda: got.append(cache.claim("k", wait_s=30)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive() and not got  # waiting, not building
    entry = _entry(1) if succeeds else None
    cache.finish("k", entry)
    waiter.join(30)
    assert got == [entry]  # the first one's build, or none: then it builds itself
    assert cache.misses == (1 if succeeds else 2)
