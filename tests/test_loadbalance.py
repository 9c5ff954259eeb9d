"""Alias-method load balancing (Kumar 2012, ch. 5; notes 001 §4.2): the C flow
against a literal Python transcription of Algorithm 1, the properties the
thesis proves (Table 5.4.1), its Examples 1 and 2, the QWalk-like baseline
and the migration schedule."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.loadbalance import LoadBalanceError, alias_flow, sfc_flow, sfc_order, unit_flow
from topomap.timemodel import TimeModel


# ---------------------------------------------------------------- reference from the thesis

def reference_alias(counts, order=None, refill="deferred"):
    """Algorithm 1 as printed (1-based), with the phantom rule of alias.py's docstring; with
    refill="next", a donor that falls below k is filled at once from the next excess bin.

    Returns {receiver: (sender, real tasks)}."""
    P = len(counts)
    order = list(range(P)) if order is None else list(order)
    T = sum(counts)
    if T == 0:
        return {}
    k = -(-T // P)
    phantom = set()
    left = k * P - T
    for rule in (lambda a: a == k - 1, lambda a: a < k - 1, lambda a: True):
        for p in order:
            if left and p not in phantom and rule(counts[p]):
                phantom.add(p)
                left -= 1
    load = {p: counts[p] + (p in phantom) for p in order}
    perm = [None] + [p for p in order if load[p] < k] + [p for p in order if load[p] > k]
    A = [None] + [load[p] for p in perm[1:]]
    S = [0] * len(perm)
    W = [0] * len(perm)
    sent_by = []                              # donors in the order of their messages
    if refill == "deferred":
        s = 1
        l = min([j for j in range(1, len(perm)) if A[j] > k], default=1)
        while l > s:
            S[s] = l
            W[s] = k - A[s]
            A[l] = A[l] - W[s]
            sent_by.append(s)
            if A[l] < k:
                l += 1
            s += 1
    else:
        deficits = [j for j in range(1, len(perm)) if A[j] < k]
        l = len(deficits) + 1
        for s in deficits:
            while A[l] == k:
                l += 1
            S[s], W[s] = l, k - A[s]
            A[l] -= W[s]
            sent_by.append(s)
            while A[l] < k:                   # refill the donor from its successor now
                S[l], W[l] = l + 1, k - A[l]
                A[l + 1] -= W[l]
                A[l] = k
                sent_by.append(l)
                l += 1
    for j in phantom:                         # j ships its phantom in its first message
        firsts = [i for i in sent_by if perm[S[i]] == j]
        if firsts:
            W[firsts[0]] -= 1
    return {perm[i]: (perm[S[i]], W[i]) for i in range(1, len(perm)) if S[i] and W[i] > 0}


def as_dict(flow):
    return {d: (s, t) for s, d, t in flow.messages()}


counts_st = st.lists(st.integers(0, 40), min_size=1, max_size=60)


# ---------------------------------------------------------------- properties

REFILLS = ["deferred", "next"]


@pytest.mark.parametrize("refill", REFILLS)
@settings(max_examples=300, deadline=None)
@given(counts=counts_st)
def test_alias_matches_algorithm_1(refill, counts):
    assert as_dict(alias_flow(counts, refill=refill)) == reference_alias(counts, refill=refill)


@pytest.mark.parametrize("refill", REFILLS)
@settings(max_examples=100, deadline=None)
@given(counts=counts_st, rnd=st.randoms(use_true_random=False))
def test_alias_in_a_given_order_matches_algorithm_1(refill, counts, rnd):
    order = list(range(len(counts)))
    rnd.shuffle(order)
    assert as_dict(alias_flow(counts, order=order, refill=refill)) == reference_alias(counts, order, refill)


@pytest.mark.parametrize("refill", REFILLS)
@settings(max_examples=300, deadline=None)
@given(counts=counts_st)
def test_alias_properties(refill, counts):
    c = np.array(counts)
    P, T = c.size, int(c.sum())
    f = alias_flow(c, refill=refill)
    k = -(-T // P)
    after = f.after
    assert after.sum() == T and (after >= 0).all()
    assert after.max(initial=0) <= k
    if T % P == 0:
        assert (after == k).all()
    elif T:
        assert after.min() >= k - 2
    m = f.metrics()
    assert m.max_receives <= 1                               # Table 5.4.1: ratio 1
    assert m.total_messages <= P - 1
    sent = np.bincount(f.src, weights=f.tasks, minlength=P)
    assert (sent <= c).all()                                 # one round: nobody sends what it does not hold
    assert (f.tasks > 0).all()
    deficit = k - c.min() if T else 0
    assert m.max_tasks_received <= deficit
    if T and T % P == 0:
        assert m.max_tasks_received == (deficit if (c != k).any() else 0)   # ratio 1: d is a lower bound
        lower = max((c < k).sum(), (c > k).sum())            # every deficit receives, every excess sends
        assert m.total_messages <= 2 * lower                 # ratio 2


@settings(max_examples=200, deadline=None)
@given(counts_st)
def test_baseline_is_optimal_in_tasks_sent(counts):
    c = np.array(counts)
    P, T = c.size, int(c.sum())
    f = unit_flow(c)
    base, extra = divmod(T, P)
    after = f.after
    assert after.sum() == T and after.min() >= base and after.max() <= base + (extra > 0)
    # the minimum a balancer to base..base+1 must move: the surplus over base+1, plus
    # over base on the processes beyond the `extra` that may keep base + 1
    over = np.sort(c - base)[::-1]
    need = np.maximum(over[:extra] - 1, 0).sum() + np.maximum(over[extra:], 0).sum()
    assert f.metrics().total_tasks_sent == need
    best_max = max(0, int(over[0]) - (extra > 0), int(over[extra]) if extra < P else 0)
    assert f.metrics().max_tasks_sent == best_max
    assert f.metrics().total_messages <= P - 1


# ---------------------------------------------------------------- the thesis's examples

def example_1(n):
    """P = 2n, k = n (1-based in the notes; 0-based here)."""
    return [n - 1] * (n - 1) + [2, 2 * n - 2] + [n + 1] * (n - 1)


@pytest.mark.parametrize("n", [6, 8, 10])
def test_example_1(n):
    f = alias_flow(example_1(n))
    # the notes' alias messages, 1-based: n+1 -> 1..n-1 one each; n+2 -> n gets n-2;
    # n+3 -> n+1 gets 1 and n+2 gets n-3; n+i -> n+i-1 gets n-(i-1) for 4 <= i <= n
    expect = [(n + 1, j, 1) for j in range(1, n)] + [(n + 2, n, n - 2), (n + 3, n + 1, 1), (n + 3, n + 2, n - 3)]
    expect += [(n + i, n + i - 1, n - (i - 1)) for i in range(4, n + 1)]
    assert sorted(f.messages()) == sorted((s - 1, d - 1, t) for s, d, t in expect)
    m = f.metrics()
    assert (m.total_messages, m.total_tasks_sent, m.max_sends) == (2 * n - 1, 3 * n - 5 + (n - 3) * (n - 2) // 2, n - 1)
    assert (m.total_messages, m.total_tasks_sent) == {6: (11, 19), 8: (15, 34), 10: (19, 53)}[n]
    # the optimum the notes give: n messages, 2n - 3 tasks; the baseline moves exactly those tasks
    assert unit_flow(example_1(n)).metrics().total_tasks_sent == 2 * n - 3


@pytest.mark.parametrize("P", [6, 8, 10])
def test_example_2(P):
    counts = [1] + [P + 1] * (P - 1)
    f = alias_flow(counts)
    # 1-based: 2 -> 1 sends P-1; i+1 -> i sends P-i for i = 2..P-1
    assert sorted(f.messages()) == [(0, 1 - 1, P - 1)] * 0 + sorted(
        [(1, 0, P - 1)] + [(i, i - 1, P - i) for i in range(2, P)])
    assert f.metrics().max_tasks_sent == P - 1
    b = unit_flow(counts)
    assert b.messages() == [(i, 0, 1) for i in range(1, P)] and b.metrics().max_tasks_sent == 1


def test_phantoms_go_to_processes_one_short_first():
    # T = 10, P = 4, k = 3, two phantoms: processes 1 and 3 hold k - 1 = 2 and take them
    f = alias_flow([6, 2, 0, 2])
    assert f.messages() == [(0, 2, 3)]
    assert f.after.tolist() == [3, 2, 3, 2]


def test_a_donor_ships_its_phantom_in_its_first_message():
    # T = 4, P = 3, k = 2: phantoms on 2 (0 tasks) and, no one else being short, on 0
    # (2 -> 3 tasks); 0's only message would carry 1 task, its phantom: nothing moves
    assert alias_flow([2, 2, 0]).messages() == []
    assert alias_flow([2, 2, 0]).after.tolist() == [2, 2, 0]      # k - 2 = 0: the thesis's bound


def test_refill_next_keeps_donors_beside_their_receivers():
    """Fragmented 12-core-node allocation on a torus: refilling a fallen donor from its successor
    (in rank or curve order) cuts the mean hops of the transfers at least in half."""
    m = tm.machine("torus:8x8x8/12")
    alloc = m.allocate(256 * 12, policy="fragmented", seed=1, runs=6)
    counts = np.random.default_rng(256).integers(20, 29, size=alloc.pes.size)
    node = m.node_of(alloc.pes)

    def mean_hops(f):
        return m.hops(node[f.src], node[f.dst]).mean()
    deferred, nxt = alias_flow(counts), alias_flow(counts, refill="next")
    assert mean_hops(nxt) < mean_hops(deferred) / 2
    assert mean_hops(sfc_flow(counts, alloc)) < mean_hops(sfc_flow(counts, alloc, refill="deferred")) / 2
    assert nxt.metrics().total_tasks_sent < deferred.metrics().total_tasks_sent


def test_balanced_and_empty():
    assert alias_flow([4, 4, 4]).messages() == [] and alias_flow([0]).messages() == []
    assert alias_flow([0, 0]).metrics() == unit_flow([0, 0]).metrics()


# ---------------------------------------------------------------- SFC variant

def test_sfc_flow_is_alias_in_hilbert_order():
    m = tm.machine("torus:4x4x4")
    alloc = m.allocate(40, policy="random", seed=3)
    rng = np.random.default_rng(1)
    counts = rng.integers(20, 29, size=40)
    order = sfc_order(alloc)
    nodes = m.node_of(alloc.pes)
    # the order walks the allocation's nodes along the curve
    assert np.array_equal(nodes[order], nodes[np.argsort(tm.networks.hilbert.index(
        np.stack(np.unravel_index(nodes, (4, 4, 4), order="F"), axis=1)), kind="stable")])
    f = sfc_flow(counts, alloc)
    assert f.method == "alias-sfc-next" and as_dict(f) == reference_alias(counts.tolist(), order.tolist(), "next")
    f = sfc_flow(counts, alloc, refill="deferred")
    assert f.method == "alias-sfc" and as_dict(f) == reference_alias(counts.tolist(), order.tolist())


def test_sfc_order_needs_coordinates():
    with pytest.raises(tm.errors.NotApplicable):
        sfc_flow([1, 3], tm.machine("hypercube:1").allocate(2))


# ---------------------------------------------------------------- schedule and time

def test_schedule_and_predicted_time():
    f = alias_flow([0, 6, 3, 3])                 # 1 sends 3 tasks to 0
    pat = f.schedule(task_bytes=1e6)
    assert pat.to_dense()[1].tolist() == [3e6, 0, 0, 0] and pat.msgs.tolist() == [1]
    model = TimeModel({"PE": (0, 1e9), "intra-node": (0, 1e9), "network": (0, 1e9)}, link_bandwidth=1e9,
                      hop_latency=0)
    # 3 MB over one 1 GB/s link: 3 ms
    assert f.predict(tm.machine("mesh:4"), [0, 1, 2, 3], 1e6, model).makespan == pytest.approx(3e-3)
    # two flows into different processes that share the link 2 -> 1 go at half speed
    g = alias_flow([0, 0, 8, 8])                 # 2 -> 0 (4), 2 -> 1 (4)... k = 4
    t = g.predict(tm.machine("mesh:4"), [0, 1, 2, 3], 1e6, model).makespan
    hops = {(s, d): t for s, d, t in g.messages()}
    assert t == pytest.approx(max(hops.values()) * 1e6 * 2 / 1e9, rel=0.5)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("counts, message", [
    ([3, -1, 2], "process 1 has a negative task count"),
    ([3, 1.5], "process 1 has a task count that is not an integer"),
    ([3, "x"], "process 1 has a task count that is not an integer"),
    ([], "non-empty 1-D"),
    ([[1, 2]], "non-empty 1-D"),
    ([2**62, 2**62], "overflow 64 bits at process 1"),
])
@pytest.mark.parametrize("balancer", [alias_flow, unit_flow])
def test_bad_counts(balancer, counts, message):
    with pytest.raises(LoadBalanceError, match=message):
        balancer(counts)


def test_bad_order_and_mapping():
    with pytest.raises(LoadBalanceError, match="each of the 3 processes"):
        alias_flow([1, 2, 3], order=[0, 1])
    with pytest.raises(LoadBalanceError, match="leaves out process 2"):
        alias_flow([1, 2, 3], order=[0, 1, 1])
    with pytest.raises(LoadBalanceError, match=r"order\[1\] = 7"):
        unit_flow([1, 2, 3], order=[0, 7, 1])
    f = alias_flow([0, 4])
    with pytest.raises(LoadBalanceError, match="each of the 2 processes"):
        f.predict(tm.machine("mesh:4"), [0, 1, 2])
    with pytest.raises(LoadBalanceError, match="rank 5"):
        f.sends(5)
    with pytest.raises(LoadBalanceError, match="refill must be one of"):
        alias_flow([1, 2], refill="later")
    with pytest.raises(LoadBalanceError, match="8 task counts"):
        sfc_flow([1] * 8, tm.machine("mesh:2x2").allocate(4))


def test_sfc_flow_follows_a_given_mapping():
    m = tm.machine("mesh:4x4")
    alloc = m.allocate(16)
    mp = tm.map(tm.generators.stencil_2d((4, 4)), alloc, method="random", seed=0)
    counts = np.arange(16)
    order = sfc_order(alloc, mp)
    # process p runs on PE mp.pe_of[p]: the order walks those PEs along the curve of the whole mesh
    curve = tm.networks.hilbert.node_order(m, np.arange(16))
    rank_on_curve = np.empty(16, int)
    rank_on_curve[curve] = np.arange(16)
    assert np.array_equal(order, np.argsort(rank_on_curve[mp.pe_of]))
    assert as_dict(sfc_flow(counts, alloc, mp)) == reference_alias(counts.tolist(), order.tolist(), "next")
    t = alias_flow(counts).predict(alloc, mp, 100.0)
    assert t.makespan == tm.timemodel.predict(alias_flow(counts).schedule(100.0), alloc, mp).makespan
