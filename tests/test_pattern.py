"""topomap.Pattern: constructors, the documented rules, views and bad input."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import Pattern, PatternError

from conftest import cases


def same(p: Pattern, q: Pattern) -> bool:
    """Equal CSR contents (Pattern compares by identity)."""
    return (p.n == q.n and p.indptr.tolist() == q.indptr.tolist() and p.indices.tolist() == q.indices.tolist()
            and p.bytes.tolist() == q.bytes.tolist())


@st.composite
def edge_lists(draw, max_n=9):
    """(n, src, dst, bytes) with duplicates, self-messages and zero-byte entries mixed in."""
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, 30))
    idx = st.lists(st.integers(0, n - 1), min_size=m, max_size=m)
    w = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0, 1e6]), min_size=m, max_size=m)
    return n, draw(idx), draw(idx), draw(w)


# ------------------------------------------------------------------ constructors

def test_from_dense_hand_case_drops_diagonal_and_zeros():
    c = np.array([[1, 5, 0],
                  [3, 0, 2],
                  [0, 0, 7]])
    p = Pattern.from_dense(c)
    # off-diagonal non-zeros in row order: (0,1)=5, (1,0)=3, (1,2)=2; diagonal 1 + 7 = 8 dropped
    assert p.n == 3 and p.nnz == 3
    assert p.indptr.tolist() == [0, 1, 3, 3]
    assert p.indices.tolist() == [1, 0, 2]
    assert p.bytes.tolist() == [5.0, 3.0, 2.0]
    assert p.total_bytes == 10.0
    assert p.provenance["dropped_self_bytes"] == 8.0
    assert p.provenance["source"] == "dense"
    assert p.msgs is None
    assert p.senders().tolist() == [0, 1, 1]
    assert p.indptr.dtype == np.int64 and p.indices.dtype == np.int32 and p.bytes.dtype == np.float64


def test_from_dense_msgs_follow_bytes_and_zero_byte_entries_are_dropped():
    c = np.array([[0, 4, 0], [0, 0, 6], [0, 0, 0]], dtype=float)
    msgs = np.array([[9, 2, 5], [0, 0, 3], [0, 0, 0]], dtype=float)
    p = Pattern.from_dense(c, msgs)
    # msgs at (0,2)=5 has zero bytes, (0,0)=9 is a self-message: both gone with their entries
    assert p.msgs.tolist() == [2.0, 3.0]
    assert p.provenance["dropped_self_bytes"] == 0.0


def test_from_dense_accepts_int_float_and_lists_with_extra_provenance():
    p = Pattern.from_dense([[0, 2], [1.5, 0]], provenance={"app": "x"})
    assert p.to_dense().tolist() == [[0.0, 2.0], [1.5, 0.0]]
    assert p.provenance == {"source": "dense", "app": "x", "dropped_self_bytes": 0.0}
    single = Pattern.from_dense([[4.0]])
    assert single.n == 1 and single.nnz == 0 and single.provenance["dropped_self_bytes"] == 4.0


def test_all_zero_matrix_is_a_pattern_without_messages():
    p = Pattern.from_dense(np.zeros((4, 4)))
    assert p.n == 4 and p.nnz == 0 and p.total_bytes == 0.0 and p.indptr.tolist() == [0] * 5


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
def test_from_sparse_every_format(fmt):
    dense = np.array([[0, 1, 0, 2], [0, 3, 0, 0], [4, 0, 0, 5], [0, 0, 6, 0]], dtype=float)
    p = Pattern.from_sparse(sp.csr_matrix(dense).asformat(fmt))
    # the diagonal 3 is dropped; the rest is kept in row-major order
    assert p.to_dense().tolist() == (dense - np.diag([0, 3, 0, 0])).tolist()
    assert p.indices.tolist() == [1, 3, 0, 3, 2]
    assert p.provenance["source"] == "scipy.sparse"
    assert p.provenance["dropped_self_bytes"] == 3.0


def test_from_sparse_sums_duplicates_and_drops_explicit_zeros():
    m = sp.coo_matrix(([1.0, 2.0, 0.0, 3.0, 4.0], ([0, 0, 1, 1, 2], [1, 1, 0, 1, 0])), shape=(3, 3))
    p = Pattern.from_sparse(m)
    # (0,1): 1+2 = 3; (1,0) explicit zero dropped; (1,1)=3 self; (2,0)=4
    assert p.to_dense().tolist() == [[0, 3, 0], [0, 0, 0], [4, 0, 0]]
    assert p.nnz == 2
    assert p.provenance["dropped_self_bytes"] == 3.0


def test_from_networkx_directed_with_weights():
    g = nx.DiGraph()
    g.add_edge(0, 1, weight=5.0)
    g.add_edge(1, 0, weight=2)
    g.add_edge(2, 0, weight=3.5)
    p = Pattern.from_networkx(g)
    assert p.to_dense().tolist() == [[0, 5, 0], [2, 0, 0], [3.5, 0, 0]]
    assert p.provenance["source"] == "networkx"


def test_from_networkx_directed_without_weights_uses_default():
    g = nx.DiGraph([(0, 1), (1, 2)])
    assert Pattern.from_networkx(g).to_dense().tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert Pattern.from_networkx(g, default=2.5).bytes.tolist() == [2.5, 2.5]


def test_from_networkx_undirected_is_one_message_each_way():
    g = nx.Graph()
    g.add_edge(0, 1, weight=4.0)
    g.add_edge(1, 2)                      # no weight -> default 1
    g.add_node(3)                         # isolated process still counts
    p = Pattern.from_networkx(g)
    assert p.n == 4
    assert p.to_dense().tolist() == [[0, 4, 0, 0], [4, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]]


def test_from_networkx_other_weight_attribute():
    g = nx.Graph()
    g.add_edge(0, 1, weight=4.0, vol=9.0)
    assert Pattern.from_networkx(g, weight="vol").bytes.tolist() == [9.0, 9.0]


def test_from_networkx_undirected_self_loop_counts_once():
    g = nx.Graph()
    g.add_edge(0, 0, weight=3.0)
    g.add_edge(0, 1, weight=1.0)
    p = Pattern.from_networkx(g)
    # the self-loop is one message 0 -> 0 of 3 bytes, not one each way
    assert p.provenance["dropped_self_bytes"] == 3.0
    assert p.to_dense().tolist() == [[0, 1], [1, 0]]


def test_from_networkx_multigraph_sums_parallel_edges():
    g = nx.MultiDiGraph()
    g.add_edge(0, 1, weight=3.0)
    g.add_edge(0, 1, weight=2.0)
    assert Pattern.from_networkx(g).to_dense().tolist() == [[0, 5], [0, 0]]


def test_from_edges_sums_duplicates_bytes_and_msgs():
    p = Pattern.from_edges([2, 0, 2, 1, 2], [0, 1, 0, 1, 1], [1.0, 2.0, 3.0, 9.0, 4.0], msgs=[1, 1, 2, 5, 1])
    # (2,0): 1+3 = 4 (msgs 3); (0,1): 2; (1,1) self, 9 bytes dropped; (2,1): 4
    assert p.n == 3
    assert p.to_dense().tolist() == [[0, 2, 0], [0, 0, 0], [4, 4, 0]]
    assert p.indptr.tolist() == [0, 1, 1, 3]
    assert p.indices.tolist() == [1, 0, 1]
    assert p.msgs.tolist() == [1.0, 3.0, 1.0]
    assert p.provenance["dropped_self_bytes"] == 9.0


def test_from_edges_scalar_bytes_explicit_n_and_zero_bytes():
    p = Pattern.from_edges([0, 1, 2], [1, 2, 0], 2.0, n=5)
    assert p.n == 5 and p.bytes.tolist() == [2.0, 2.0, 2.0] and p.indptr.tolist() == [0, 1, 2, 3, 3, 3]
    z = Pattern.from_edges([0, 1], [1, 0], [0.0, 3.0])
    assert z.nnz == 1 and z.to_dense().tolist() == [[0, 0], [3, 0]]
    empty = Pattern.from_edges([], [], [], n=3)
    assert empty.n == 3 and empty.nnz == 0


def test_from_edges_integral_float_indices_are_accepted():
    p = Pattern.from_edges(np.array([0.0, 1.0]), np.array([1.0, 0.0]), [1, 1])
    assert p.indices.tolist() == [1, 0]


def test_dropped_self_bytes_adds_to_given_provenance():
    p = Pattern.from_edges([0, 1], [0, 0], [5.0, 1.0], provenance={"dropped_self_bytes": 2.0, "file": "f"})
    assert p.provenance == {"dropped_self_bytes": 7.0, "file": "f"}


def test_constructor_accepts_canonical_csr():
    p = Pattern(3, [0, 2, 2, 3], [1, 2, 0], [1.0, 2.0, 3.0], msgs=[1, 1, 2], provenance={"a": 1})
    assert p.to_dense().tolist() == [[0, 1, 2], [0, 0, 0], [3, 0, 0]]
    assert p.msgs.tolist() == [1.0, 1.0, 2.0]
    assert p.provenance == {"a": 1}
    assert repr(p) == "Pattern(n=3, nnz=3, total_bytes=6, source='?')"


def test_repr_names_source():
    assert repr(Pattern.from_dense([[0, 1], [1, 0]])) == "Pattern(n=2, nnz=2, total_bytes=2, source='dense')"


# ------------------------------------------------------------------ views

def test_symmetric_hand_case_and_msgs():
    p = Pattern.from_edges([0, 1, 2], [1, 0, 0], [5.0, 1.0, 2.0], msgs=[1, 2, 3])
    s = p.symmetric()
    # C + C^T: (0,1) = 5 + 1, (0,2) = 0 + 2, (2,0) = 2 + 0
    assert s.to_dense().tolist() == [[0, 6, 2], [6, 0, 0], [2, 0, 0]]
    assert s.msgs.tolist() == [3.0, 3.0, 3.0, 3.0]
    assert s.provenance["symmetric"] is True
    assert s.total_bytes == 2 * p.total_bytes


def test_quotient_hand_case():
    # 0->1:1, 1->2:2, 2->3:4, 3->0:8, 0->2:16 with groups {0,1} and {2,3}
    p = Pattern.from_edges([0, 1, 2, 3, 0], [1, 2, 3, 0, 2], [1.0, 2.0, 4.0, 8.0, 16.0])
    q = p.quotient([0, 0, 1, 1])
    # group 0 -> 1: 2 + 16 = 18; group 1 -> 0: 8; inside: 1 + 4 = 5 dropped
    assert q.to_dense().tolist() == [[0, 18], [8, 0]]
    assert q.provenance["dropped_self_bytes"] == 5.0
    assert q.provenance["nparts"] == 2 and q.provenance["source"] == "quotient"
    q3 = p.quotient([2, 2, 0, 0], nparts=3)
    # groups relabelled: {2,3} is 0, {0,1} is 2, group 1 empty
    assert q3.to_dense().tolist() == [[0, 0, 8], [0, 0, 0], [18, 0, 0]]


def test_quotient_sums_msgs():
    p = Pattern.from_edges([0, 1], [2, 2], [1.0, 1.0], msgs=[3, 4])
    assert p.quotient([0, 0, 1]).msgs.tolist() == [7.0]


def test_quotient_bad_parts():
    p = Pattern.from_dense([[0, 1], [1, 0]])
    with pytest.raises(PatternError, match=r"part\[1\] = .*0\.5.* is not an integer"):
        p.quotient([0, 0.5])
    with pytest.raises(PatternError, match=r"part\[1\] = -1 is negative"):
        p.quotient([0, -1])
    with pytest.raises(PatternError, match="part has 1 entries, the pattern has 2 processes"):
        p.quotient([0])
    with pytest.raises(PatternError, match=r"part\[1\] = 1 is out of range \[0, 1\)"):
        p.quotient([0, 1], nparts=1)
    with pytest.raises(PatternError, match="exceeds the int32"):
        p.quotient([0, 1], nparts=2**40)


def test_to_dense_and_to_scipy_round_trips():
    c = np.array([[0, 1.5, 0], [2, 0, 3], [0, 0, 0]])
    p = Pattern.from_dense(c)
    assert np.array_equal(p.to_dense(), c)
    m = p.to_scipy()
    assert sp.issparse(m) and m.shape == (3, 3) and m.nnz == 3
    assert np.array_equal(m.toarray(), c)
    assert same(Pattern.from_sparse(m), p)
    assert same(Pattern.from_dense(p.to_dense()), p)


def test_arrays_are_read_only_and_fields_frozen():
    p = Pattern.from_dense([[0, 1], [2, 0]], msgs=[[0, 1], [1, 0]])
    for arr in (p.indptr, p.indices, p.bytes, p.msgs):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 0
    with pytest.raises(AttributeError):
        p.n = 3
    # views do not change the pattern
    d = p.to_dense()
    d[0, 1] = 99
    assert p.to_dense()[0, 1] == 1.0


def test_constructor_copies_caller_arrays():
    indptr = np.array([0, 1, 2], dtype=np.int64)
    indices = np.array([1, 0], dtype=np.int32)
    byts = np.array([1.0, 2.0])
    p = Pattern(2, indptr, indices, byts)
    # the caller's arrays stay writable and later changes do not reach the pattern
    indices[0] = 0
    byts[0] = 50.0
    indptr[1] = 0
    assert p.indices.tolist() == [1, 0] and p.bytes.tolist() == [1.0, 2.0] and p.indptr.tolist() == [0, 1, 2]


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("matrix, msg", [
    (np.zeros((2, 3)), r"must be square, got shape \(2, 3\)"),
    (np.zeros(4), r"must be square, got shape \(4,\)"),
    (np.zeros((2, 2, 2)), r"must be square, got shape \(2, 2, 2\)"),
    (np.zeros((0, 0)), "needs at least one process"),
    (np.array([[0, np.nan], [0, 0]]), r"matrix\[0, 1\] = .*nan.* is negative, NaN or infinite"),
    (np.array([[0, 0], [np.inf, 0]]), r"matrix\[1, 0\] = .*inf.* is negative, NaN or infinite"),
    (np.array([[0, 1], [-2, 0]]), r"matrix\[1, 0\] = .*-2.* is negative"),
    (np.array([[-1.0, 0], [0, 0]]), r"matrix\[0, 0\] = .*-1.0.* is negative"),   # even on the diagonal
    (np.ones((2, 2), dtype=bool), "must be numeric, got dtype bool"),
    (np.array([[None, 1], [1, None]]), "must be numeric, got dtype object"),
    (np.array([["0", "1"], ["1", "0"]]), "must be numeric, got dtype <U1"),
    (np.ones((2, 2), dtype=complex), "must be numeric, got dtype complex128"),
])
def test_from_dense_rejects(matrix, msg):
    with pytest.raises(PatternError, match=msg):
        Pattern.from_dense(matrix)


def test_from_dense_rejects_bad_msgs():
    c = np.array([[0, 1], [1, 0]])
    with pytest.raises(PatternError, match=r"msgs has shape \(3, 3\), bytes has \(2, 2\)"):
        Pattern.from_dense(c, msgs=np.ones((3, 3)))
    with pytest.raises(PatternError, match=r"msgs\[0\] = .*-1.* is negative"):
        Pattern.from_dense(c, msgs=[[0, -1], [1, 0]])
    with pytest.raises(PatternError, match="msgs must be numeric, got dtype <U1"):
        Pattern.from_dense(c, msgs=[["a", "b"], ["c", "d"]])


@pytest.mark.parametrize("args, kwargs, msg", [
    (([0, 1], [1], [1, 2]), {}, "src has 2 entries but dst has 1"),
    (([0, 1], [1, 0], [1, 2, 3]), {}, r"bytes has shape \(3,\), expected \(2,\)"),
    (([0, 1], [1, 0], [1, 2]), {"msgs": [1]}, r"msgs has shape \(1,\), expected \(2,\)"),
    (([0, 1.5], [1, 0], [1, 2]), {}, r"src\[1\] = .*1\.5.* is not an integer"),
    (([0, 1], [np.nan, 0], [1, 2]), {}, r"dst\[0\] = .*nan.* is not an integer"),
    (([0, 1], [1, 0], [1, 2]), {"n": 1}, r"src\[1\] = 1 is out of range \[0, 1\)"),
    (([0, 1], [1, 7], [1, 2]), {"n": 3}, r"dst\[1\] = 7 is out of range \[0, 3\)"),
    (([0, -1], [1, 0], [1, 2]), {"n": 3}, r"src\[1\] = -1 is out of range \[0, 3\)"),
    (([0, 1], [1, 0], [1, np.nan]), {}, r"bytes\[1\] = .*nan.* is negative, NaN or infinite"),
    (([0, 1], [1, 0], [np.inf, 1]), {}, r"bytes\[0\] = .*inf.* is negative, NaN or infinite"),
    (([0, 1], [1, 0], [1, -3]), {}, r"bytes\[1\] = .*-3.* is negative"),
    (([0], [1], [1]), {"msgs": [-1]}, r"msgs\[0\] = .*-1.* is negative"),
    (([True], [False], [1]), {}, "src must hold integers, got dtype bool"),
    ((["0"], ["1"], [1]), {}, "src must hold integers, got dtype <U1"),
    (([0], [None], [1]), {}, "dst must hold integers, got dtype object"),
    (([0], [1], ["1"]), {}, "bytes must be numeric, got dtype <U1"),
    (([0], [1], [True]), {}, "bytes must be numeric, got dtype bool"),
    (([[0]], [[1]], [1]), {}, r"src must be one-dimensional, got shape \(1, 1\)"),
    (([], [], []), {}, "empty edge list: give n"),
    (([0], [1], [1]), {"n": 0}, "n must be a positive integer, got 0"),
    (([0], [1], [1]), {"n": 2.0}, "n must be a positive integer, got 2.0"),
    (([0], [1], [1]), {"n": True}, "n must be a positive integer, got True"),
    (([0], [1], [1]), {"n": 2**31}, "n=2147483648 exceeds the int32 process id range"),
    (([0], [1], [1]), {"n": 2**40}, "n=1099511627776 exceeds the int32 process id range"),
])
def test_from_edges_rejects(args, kwargs, msg):
    with pytest.raises(PatternError, match=msg):
        Pattern.from_edges(*args, **kwargs)


def test_from_sparse_rejects():
    with pytest.raises(PatternError, match=r"must be square, got shape \(3, 2\)"):
        Pattern.from_sparse(sp.csr_matrix((3, 2)))
    with pytest.raises(PatternError, match="needs at least one process"):
        Pattern.from_sparse(sp.csr_matrix((0, 0)))
    with pytest.raises(PatternError, match="expected a scipy.sparse matrix, got ndarray"):
        Pattern.from_sparse(np.eye(2))
    with pytest.raises(PatternError, match=r"bytes\[0\] = .*-1.* is negative"):
        Pattern.from_sparse(sp.csr_matrix(np.array([[0, -1.0], [0, 0]])))
    with pytest.raises(PatternError, match="bytes must be numeric, got dtype bool"):
        Pattern.from_sparse(sp.csr_matrix(np.array([[False, True], [False, False]])))
    with pytest.raises(PatternError, match=r"bytes\[0\] = .*nan"):
        Pattern.from_sparse(sp.csr_matrix(np.array([[0, np.nan], [0, 0]])))


def test_from_networkx_rejects():
    with pytest.raises(PatternError, match="the graph has no nodes"):
        Pattern.from_networkx(nx.Graph())
    g = nx.Graph()
    g.add_edge("a", "b")
    with pytest.raises(PatternError, match="nodes must be the integers 0..n-1"):
        Pattern.from_networkx(g)
    with pytest.raises(PatternError, match="nodes must be the integers 0..n-1"):
        Pattern.from_networkx(nx.Graph([(1, 2)]))          # 0 missing
    g = nx.DiGraph()
    g.add_edge(0, 1, weight=-1.0)
    with pytest.raises(PatternError, match=r"bytes\[0\] = .*-1.* is negative"):
        Pattern.from_networkx(g)
    g = nx.DiGraph()
    g.add_edge(0, 1, weight="heavy")
    with pytest.raises(PatternError, match=r"edge \(0, 1\) has weight='heavy', which is not a number"):
        Pattern.from_networkx(g)
    g = nx.DiGraph()
    g.add_edge(1, 0, weight=True)
    with pytest.raises(PatternError, match=r"edge \(1, 0\) has weight=True"):
        Pattern.from_networkx(g)
    with pytest.raises(PatternError, match="expected a networkx graph, got list"):
        Pattern.from_networkx([(0, 1)])


@pytest.mark.parametrize("args, kwargs, msg", [
    ((0, [0], [], []), {}, "needs at least one process, got n=0"),
    ((-1, [0], [], []), {}, "got n=-1"),
    ((2.0, [0, 0, 0], [], []), {}, "got n=2.0"),
    ((True, [0, 0], [], []), {}, "got n=True"),
    ((2**31, [0], [], []), {}, "n=2147483648 exceeds the int32 process id range"),
    ((2, [0, 1], [1], [1.0]), {}, "indptr must have length n\\+1"),
    ((2, [1, 1, 2], [1, 0], [1.0, 1.0]), {}, "indptr must have length n\\+1, start at 0"),
    ((2, [0, 2, 1], [1, 0], [1.0, 1.0]), {}, "non-decreasing"),
    ((2, [0, 1, 2], [1], [1.0, 1.0]), {}, r"indices and bytes must have length indptr\[-1\] = 2"),
    ((2, [0, 1, 2], [1, 0], [1.0]), {}, r"indices and bytes must have length indptr\[-1\] = 2"),
    ((2, [0, 1, 2], [1, 5], [1.0, 1.0]), {}, r"receiver 5 of entry 1 is out of range \[0, 2\)"),
    ((2, [0, 1, 2], [1, -1], [1.0, 1.0]), {}, r"receiver -1 of entry 1 is out of range"),
    ((2, [0, 1, 2], [2**32 + 1, 0], [1.0, 1.0]), {}, r"receiver 4294967297 of entry 0 is out of range"),
    ((2, [0, 1, 2], [1.5, 0], [1.0, 1.0]), {}, r"indices\[0\] = .*1\.5.* is not an integer"),
    ((2, [0, 1.5, 2], [1, 0], [1.0, 1.0]), {}, r"indptr\[1\] = .*1\.5.* is not an integer"),
    ((2, [0, 1, 2], [True, False], [1.0, 1.0]), {}, "indices must hold integers, got dtype bool"),
    ((2, [0, 1, 2], [1, 0], [0.0, 1.0]), {}, r"bytes\[0\] = .*0\.0.* must be positive and finite"),
    ((2, [0, 1, 2], [1, 0], [1.0, np.inf]), {}, r"bytes\[1\] = .*inf.* must be positive"),
    ((2, [0, 1, 2], [1, 0], [1.0, -2.0]), {}, r"bytes\[1\] = .*-2\.0.* must be positive"),
    ((2, [0, 1, 2], [0, 0], [1.0, 1.0]), {}, "self-message of process 0 in canonical CSR"),
    ((3, [0, 2, 2, 2], [2, 1], [1.0, 1.0]), {}, "sorted and unique within each row"),
    ((3, [0, 2, 2, 2], [1, 1], [1.0, 1.0]), {}, "sorted and unique within each row"),
    ((2, [0, 1, 2], [1, 0], ["1", "2"]), {}, "bytes must be numeric, got dtype <U1"),
    ((2, [0, 1, 2], [1, 0], [True, True]), {}, "bytes must be numeric, got dtype bool"),
    ((2, [0, 1, 2], [1, 0], [1.0, 1.0]), {"msgs": [1, -1]}, r"msgs\[1\] = .*-1.* is negative"),
    ((2, [0, 1, 2], [1, 0], [1.0, 1.0]), {"msgs": [1]}, r"msgs has shape \(1,\), expected \(2,\)"),
])
def test_constructor_rejects_non_canonical_csr(args, kwargs, msg):
    with pytest.raises(PatternError, match=msg):
        Pattern(*args, **kwargs)


def test_errors_are_topomap_and_value_errors():
    with pytest.raises(tm.TopomapError):
        Pattern.from_dense(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        Pattern.from_dense(np.zeros((2, 3)))


# ------------------------------------------------------------------ properties

def _dense_of(n, src, dst, w):
    d = np.zeros((n, n))
    np.add.at(d, (np.asarray(src, dtype=int), np.asarray(dst, dtype=int)), np.asarray(w, dtype=float))
    return d


@given(edge_lists())
def test_from_edges_equals_dense_accumulation(case):
    n, src, dst, w = case
    p = Pattern.from_edges(src, dst, w, n=n)
    want = _dense_of(n, src, dst, w)
    self_bytes = float(np.trace(want))
    np.fill_diagonal(want, 0)
    assert np.array_equal(p.to_dense(), want)
    assert p.nnz == int(np.count_nonzero(want))
    assert p.provenance["dropped_self_bytes"] == pytest.approx(self_bytes)
    # canonical: sorted unique columns per row, positive bytes
    for r in range(n):
        cols = p.indices[p.indptr[r]:p.indptr[r + 1]]
        assert np.all(np.diff(cols) > 0)
    assert np.all(p.bytes > 0)


@given(cases())
def test_dense_round_trip(case):
    _, p, _ = case
    assert same(Pattern.from_dense(p.to_dense()), p)
    assert same(Pattern.from_sparse(p.to_scipy()), p)
    assert same(Pattern(p.n, p.indptr, p.indices, p.bytes), p)


@given(cases())
def test_symmetric_is_symmetric(case):
    _, p, _ = case
    s = p.symmetric()
    d = s.to_dense()
    assert np.array_equal(d, d.T)
    assert np.allclose(d, p.to_dense() + p.to_dense().T)
    assert s.total_bytes == pytest.approx(2 * p.total_bytes)
    assert np.array_equal(s.symmetric().to_dense(), 2 * d)


@given(cases(), st.data())
def test_quotient_preserves_crossing_bytes(case, data):
    _, p, _ = case
    k = data.draw(st.integers(1, p.n))
    part = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=p.n, max_size=p.n)))
    q = p.quotient(part, nparts=k)
    assert q.n == k
    src, dst = part[p.senders()], part[p.indices]
    cross = src != dst
    assert q.total_bytes == pytest.approx(float(p.bytes[cross].sum()))
    assert q.provenance["dropped_self_bytes"] == pytest.approx(float(p.bytes[~cross].sum()))
    want = np.zeros((k, k))
    np.add.at(want, (src[cross], dst[cross]), p.bytes[cross])
    assert np.allclose(q.to_dense(), want)


@given(st.integers(1, 6), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 1.0, 2.5])),
                                   max_size=20), st.booleans(), st.booleans())
def test_canonical_shortcut_equals_sorting_path(n, edges, canonical, with_msgs):
    """from_edges skips the sort for sorted, repeat-free input: the result must equal
    the sorting path's (reached here by feeding the same entries reversed)."""
    edges = [(s % n, d % n, w) for s, d, w in edges]
    if canonical:
        edges = sorted({(s, d): (s, d, w or 1.0) for s, d, w in edges if s != d}.values())
    src, dst, w = (np.array(c, dtype=float) for c in zip(*edges)) if edges else (np.zeros(0),) * 3
    msgs = w * 2 if with_msgs else None
    a = tm.Pattern.from_edges(src.astype(np.int64), dst.astype(np.int64), w, msgs, n=n, provenance={"source": "t"})
    rev = slice(None, None, -1)
    b = tm.Pattern.from_edges(src[rev], dst[rev], w[rev], None if msgs is None else msgs[rev], n=n,
                              provenance={"source": "t"})
    for name in ("indptr", "indices", "bytes"):
        assert np.array_equal(getattr(a, name), getattr(b, name)) and getattr(a, name).dtype == getattr(b, name).dtype
    assert (a.msgs is None) == (b.msgs is None) and (a.msgs is None or np.array_equal(a.msgs, b.msgs))
    assert a.provenance == b.provenance
