"""An order too long to be a test's name is refused free, alike in every case, and fills no cache an agent's orders
key: an agent sending megabytes of distinct "orders" cost a fuzzy match of each against every name and kept each
one in the gatekeeper's caches (find_normal, names_test_words: 4,096 entries each, of any length)."""

from __future__ import annotations

from clinbench.dx import gatekeeper
from clinbench.dx.gatekeeper import MAX_ORDER_CHARS, UNKNOWN_REFUSAL, OfflineGatekeeper, find_normal
from tests.dx.orders import ordered_test


def test_a_long_order_is_refused_free_in_every_case_and_kept_by_no_cache(case_by_id, tmp_path):
    before = (find_normal.cache_info().currsize, gatekeeper.names_test_words.cache_info().currsize)
    orders = [f"CT chest {i} " + "with contrast " * 20_000 for i in range(40)]  # 280 KB each
    for case_id in (1, 4, 23):
        gk = OfflineGatekeeper(case_by_id[case_id])
        for order in orders:
            reply = gk.answer("test", order)
            assert (reply.text, reply.source) == (UNKNOWN_REFUSAL, "REFUSED")
    assert (find_normal.cache_info().currsize, gatekeeper.names_test_words.cache_info().currsize) == before
    event = ordered_test(case_by_id[1], tmp_path, orders[0])
    assert event["cost"] == 0.0


def test_the_longest_test_name_the_tables_know_is_still_an_order(case_by_id, tmp_path):
    order = "Selective catheter placement, internal carotid artery, with angiography of the intracranial carotid circulation"
    assert len(order) <= MAX_ORDER_CHARS
    event = ordered_test(case_by_id[1], tmp_path, order)
    assert event["cost"] > 0 and event["reply"] != UNKNOWN_REFUSAL
