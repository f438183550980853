"""Test helper: a merge asked for and taken at once, as a merge gesture on a fork where nothing is in
flight does (bot/services/forks.py: request_merge, then Merging.proceed's take_merge)."""


def begin_merge(store, fork_id: int, user_id: str, owner: str, seconds: float, idle_before=None) -> bool:
    return store.merges.request_merge(fork_id, user_id, "", idle_before) and \
        store.merges.take_merge(fork_id, owner, seconds) == 1
