"""The time model's parameters: Hockney alpha/beta and LogGP per link class.

A message of ``m`` bytes between two PEs is costed by the **link class** of
the PEs' lowest common level (:attr:`topomap.Machine.level_names`):

* Hockney (Hockney 1994): ``alpha + m / bandwidth`` for an uncontended
  message; on the network the transfer part is shared max-min fairly with the
  concurrent flows (:mod:`topomap.timemodel.predict`), each flow also limited
  to its class's bandwidth (the NIC / protocol rate), and the latency grows by
  ``hop_latency`` per link of its route;
* LogGP (Alexandrov et al. 1995): latency ``L``, overhead ``o``, gap ``g``,
  gap per byte ``G``; one message costs ``o + (m - 1) G + L + o``.

Which class a level uses
------------------------
1. A class named exactly like the level (case-insensitive: ``"leaf"``,
   ``"Package"``, ``"L3Cache+NUMANode"``) wins.
2. Otherwise level 0 (the same PE) uses ``"PE"``; node-tree levels use
   ``"intra-socket"`` up to the first level whose name has ``Package`` or
   ``Socket`` in it and ``"inter-socket"`` above it; a node tree without such
   a level uses ``"intra-node"``; network levels use ``"network"``.
3. A class the machine needs and the model lacks is a :class:`TimeModelError`
   naming it: a user's model is taken as given, never silently completed from
   the defaults (merge explicitly with :meth:`TimeModel.merged`).

Defaults (:meth:`TimeModel.default`)
------------------------------------
Order-of-magnitude figures of a dual-socket x86 node with a 100 Gb/s
InfiniBand network (MPI over shared memory inside the node, as measured by
osu_latency / osu_bw on such machines):

=============  ===========  ==================
class          alpha        bandwidth
=============  ===========  ==================
PE             0.1 us       20 GB/s
intra-socket   0.25 us      12 GB/s
inter-socket   0.45 us      8 GB/s
intra-node     0.35 us      10 GB/s
network        1.0 us       12.5 GB/s
=============  ===========  ==================

``link_bandwidth`` = 12.5 GB/s per unit of link capacity, ``hop_latency`` =
0.1 us per link (the SimGrid export's defaults).  LogGP classes not given
are derived from the Hockney ones: ``L = alpha/2``, ``o = alpha/4``,
``g = alpha/2``, ``G = 1/bandwidth`` (so a 1-byte message costs ``alpha``).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..errors import TimeModelError
from ..machine import Machine

__all__ = ["LinkClass", "LogGP", "TimeModel", "DEFAULT_CLASSES", "as_time_model"]


def _number(value: Any, what: str, positive: bool = False, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TimeModelError(f"{what} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf) or v < 0 or (positive and v == 0):
        need = "positive" if positive else "non-negative"
        raise TimeModelError(f"{what} must be a {need} {'number' if allow_inf else 'finite number'}, got {value!r}")
    return v


@dataclass(frozen=True)
class LinkClass:
    """Hockney parameters of one link class.

    Parameters
    ----------
    alpha : float
        Latency in seconds (>= 0).
    bandwidth : float
        Bytes per second (> 0; ``inf`` = no limit of its own, allowed for
        network classes, whose flows are limited by their links).

    Examples
    --------
    >>> LinkClass(1e-6, 1e10).time(1e4)
    2e-06
    """

    alpha: float
    bandwidth: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", _number(self.alpha, "alpha"))
        object.__setattr__(self, "bandwidth", _number(self.bandwidth, "bandwidth", positive=True, allow_inf=True))

    def time(self, nbytes: Any) -> Any:
        """Uncontended time of messages of ``nbytes`` bytes (vectorised)."""
        return self.alpha + np.asarray(nbytes, dtype=np.float64) / self.bandwidth if np.ndim(nbytes) \
            else self.alpha + float(nbytes) / self.bandwidth


@dataclass(frozen=True)
class LogGP:
    """LogGP parameters of one link class (seconds; ``G`` in seconds per byte).

    Examples
    --------
    >>> LogGP(L=5e-7, o=2.5e-7, g=5e-7, G=1e-10).time(1)
    1e-06
    """

    L: float
    o: float
    g: float
    G: float

    def __post_init__(self) -> None:
        for name in ("L", "o", "g", "G"):
            object.__setattr__(self, name, _number(getattr(self, name), f"LogGP {name}"))

    def time(self, nbytes: Any) -> Any:
        """One uncontended message: ``o + (m - 1) G + L + o`` (m >= 1)."""
        m = np.maximum(np.asarray(nbytes, dtype=np.float64), 1.0)
        t = 2 * self.o + (m - 1) * self.G + self.L
        return t if np.ndim(nbytes) else float(t)

    @classmethod
    def from_hockney(cls, c: LinkClass) -> "LogGP":
        """The module's derivation rule: ``L = alpha/2, o = alpha/4, g = alpha/2, G = 1/bandwidth``."""
        return cls(L=c.alpha / 2, o=c.alpha / 4, g=c.alpha / 2, G=1.0 / c.bandwidth)


DEFAULT_CLASSES: dict[str, LinkClass] = {
    "PE": LinkClass(1.0e-7, 2.0e10),
    "intra-socket": LinkClass(2.5e-7, 1.2e10),
    "inter-socket": LinkClass(4.5e-7, 8.0e9),
    "intra-node": LinkClass(3.5e-7, 1.0e10),
    "network": LinkClass(1.0e-6, 1.25e10),
}


def _as_class(name: str, value: Any) -> LinkClass:
    if isinstance(value, LinkClass):
        return value
    try:
        if isinstance(value, Mapping):
            extra = set(value) - {"alpha", "bandwidth"}
            if extra:
                raise TimeModelError(f"link class {name!r}: unknown keys {sorted(extra)} (expected alpha, bandwidth)")
            return LinkClass(value["alpha"], value["bandwidth"])
        alpha, bandwidth = value
        return LinkClass(alpha, bandwidth)
    except TimeModelError as exc:
        raise TimeModelError(f"link class {name!r}: {exc}") from None
    except (KeyError, TypeError, ValueError):
        raise TimeModelError(f"link class {name!r} must be (alpha, bandwidth) or "
                             f"{{'alpha': ..., 'bandwidth': ...}}, got {value!r}") from None


def _as_loggp(name: str, value: Any) -> LogGP:
    if isinstance(value, LogGP):
        return value
    try:
        if isinstance(value, Mapping):
            return LogGP(**{k: value[k] for k in ("L", "o", "g", "G")})
        return LogGP(*value)
    except TimeModelError as exc:
        raise TimeModelError(f"LogGP class {name!r}: {exc}") from None
    except (KeyError, TypeError, ValueError):
        raise TimeModelError(f"LogGP class {name!r} must be (L, o, g, G) or a dict of them, got {value!r}") from None


class TimeModel:
    """Latency and bandwidth per link class, plus the network links' speed.

    Parameters
    ----------
    classes : mapping of str to LinkClass, (alpha, bandwidth) or dict
        Hockney parameters per class (see the module docstring for which
        class each machine level uses).
    link_bandwidth : float
        Bytes/s of a network link of capacity 1 (a link's bandwidth is its
        capacity times this).
    hop_latency : float
        Seconds added per network link of a route.
    loggp : mapping of str to LogGP, (L, o, g, G) or dict, optional
        LogGP parameters per class; classes not given are derived from the
        Hockney ones.

    Examples
    --------
    >>> import topomap as tm
    >>> model = TimeModel({"PE": (1e-7, 2e10), "intra-node": (3e-7, 1e10), "network": (1e-6, 1.25e10)})
    >>> model.level_classes(tm.machine("torus:4x4/8"))
    ['PE', 'intra-node', 'network']
    >>> TimeModel.from_dict(model.to_dict()) == model
    True
    """

    def __init__(self, classes: Mapping[str, Any], link_bandwidth: float = 1.25e10, hop_latency: float = 1e-7,
                 loggp: Mapping[str, Any] | None = None):
        if not isinstance(classes, Mapping) or not classes:
            raise TimeModelError(f"classes must be a non-empty mapping of class name to (alpha, bandwidth), "
                                 f"got {classes!r}")
        self.classes: dict[str, LinkClass] = {}
        for name, value in classes.items():
            if not isinstance(name, str) or not name:
                raise TimeModelError(f"link class names must be non-empty strings, got {name!r}")
            if name.lower() in {k.lower() for k in self.classes}:
                raise TimeModelError(f"link class {name!r} is given twice (names are case-insensitive)")
            self.classes[name] = _as_class(name, value)
        self.link_bandwidth = _number(link_bandwidth, "link_bandwidth", positive=True)
        self.hop_latency = _number(hop_latency, "hop_latency")
        self.loggp: dict[str, LogGP] = {}
        for name, value in (loggp or {}).items():
            if self._find(name) is None:
                raise TimeModelError(f"LogGP class {name!r} has no Hockney class of the same name")
            self.loggp[self._find(name)] = _as_loggp(name, value)

    # ---------------------------------------------------------------- building
    @classmethod
    def default(cls) -> "TimeModel":
        """The documented defaults (module docstring).

        Examples
        --------
        >>> TimeModel.default().classes["network"]
        LinkClass(alpha=1e-06, bandwidth=12500000000.0)
        """
        return cls(DEFAULT_CLASSES)

    def merged(self, other: "TimeModel | Mapping[str, Any]") -> "TimeModel":
        """A copy whose classes are this model's, overridden by ``other``'s.

        ``other`` may be a TimeModel (its link_bandwidth and hop_latency then
        win too) or a mapping of classes.

        Examples
        --------
        >>> m = TimeModel.default().merged({"network": (2e-6, 1e10)})
        >>> m.classes["network"].alpha, m.classes["PE"].alpha
        (2e-06, 1e-07)
        """
        mine = {k: v for k, v in self.classes.items()}
        theirs = other.classes if isinstance(other, TimeModel) else {k: _as_class(k, v) for k, v in other.items()}
        for name, value in theirs.items():
            old = self._find(name)
            if old is not None:
                del mine[old]
            mine[name] = value
        loggp = {k: v for k, v in self.loggp.items() if k in mine}
        if isinstance(other, TimeModel):
            loggp.update(other.loggp)
            return TimeModel(mine, other.link_bandwidth, other.hop_latency, loggp)
        return TimeModel(mine, self.link_bandwidth, self.hop_latency, loggp)

    def to_dict(self) -> dict:
        """Plain JSON-able dict; :meth:`from_dict` reads it back."""
        out: dict[str, Any] = {
            "classes": {k: {"alpha": v.alpha, "bandwidth": v.bandwidth} for k, v in self.classes.items()},
            "link_bandwidth": self.link_bandwidth,
            "hop_latency": self.hop_latency,
        }
        if self.loggp:
            out["loggp"] = {k: {"L": v.L, "o": v.o, "g": v.g, "G": v.G} for k, v in self.loggp.items()}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TimeModel":
        """Model from a dict as :meth:`to_dict` writes it (``classes`` required)."""
        if not isinstance(d, Mapping) or "classes" not in d:
            raise TimeModelError(f"a time model dict needs a 'classes' entry, got {d!r}")
        extra = set(d) - {"classes", "link_bandwidth", "hop_latency", "loggp"}
        if extra:
            raise TimeModelError(f"unknown time model keys {sorted(extra)}")
        return cls(d["classes"], d.get("link_bandwidth", 1.25e10), d.get("hop_latency", 1e-7), d.get("loggp"))

    @classmethod
    def from_json(cls, source: "str | os.PathLike[str]") -> "TimeModel":
        """Model from a JSON file path or a JSON text (one starting with ``{``)."""
        text = str(source)
        where = "JSON text"
        if not text.lstrip().startswith("{"):
            where = os.fspath(source)
            try:
                with open(where, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise TimeModelError(f"cannot read time model {where}: {exc}") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TimeModelError(f"{where}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
        try:
            return cls.from_dict(d)
        except TimeModelError as exc:
            raise TimeModelError(f"{where}: {exc}") from None

    def to_json(self) -> str:
        """The model as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    # ---------------------------------------------------------------- lookup
    def _find(self, name: str) -> str | None:
        low = name.lower()
        return next((k for k in self.classes if k.lower() == low), None)

    def level_classes(self, machine: Machine, needed: Any = None) -> list[str | None]:
        """The class each LCA level of ``machine`` uses (module docstring rule).

        Raises TimeModelError naming the first class the model lacks among
        the ``needed`` levels (default: all); a level not needed and without
        a class maps to None.
        """
        needed = None if needed is None else {int(v) for v in needed}
        names = machine.level_names
        nnode = len(machine.node.levels)
        socket = next((k for k in range(1, nnode + 1)
                       if any(t in names[k].lower() for t in ("package", "socket"))), None)
        out = []
        for level, name in enumerate(names):
            exact = self._find(name)
            if exact is not None:
                out.append(exact)
                continue
            if level == 0:
                generic = "PE"
            elif level <= nnode:
                generic = "intra-node" if socket is None else ("intra-socket" if level <= socket else "inter-socket")
            else:
                generic = "network"
            found = self._find(generic)
            if found is None and needed is not None and level not in needed:
                out.append(None)
                continue
            if found is None:
                raise TimeModelError(f"the time model has no link class {generic!r} (nor {name!r}), which level "
                                     f"{level} ({name!r}) of machine {machine._describe()} needs; "
                                     f"classes: {sorted(self.classes)}")
            out.append(found)
        return out

    def level_arrays(self, machine: Machine, needed: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Hockney alpha and bandwidth of every LCA level of ``machine`` (NaN
        for levels not ``needed`` that have no class)."""
        cls = [self.classes[c] if c else None for c in self.level_classes(machine, needed)]
        return (np.array([c.alpha if c else np.nan for c in cls]),
                np.array([c.bandwidth if c else np.nan for c in cls]))

    def level_loggp(self, machine: Machine, needed: Any = None) -> list[LogGP | None]:
        """LogGP parameters of every LCA level (derived where not given; None
        for levels not ``needed`` that have no class)."""
        return [(self.loggp.get(c) or LogGP.from_hockney(self.classes[c])) if c else None
                for c in self.level_classes(machine, needed)]

    # ---------------------------------------------------------------- dunder
    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeModel) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}: {v.alpha:.3g} s + m / {v.bandwidth:.3g} B/s" for k, v in self.classes.items())
        return f"TimeModel({parts}; links {self.link_bandwidth:.3g} B/s per capacity, {self.hop_latency:.3g} s per hop)"


def as_time_model(value: Any) -> TimeModel | None:
    """The model a ``time=`` option names: True = the defaults, False/None =
    none, a TimeModel, a dict (:meth:`TimeModel.from_dict`) or a JSON file path.

    Examples
    --------
    >>> as_time_model(True) == TimeModel.default(), as_time_model(False)
    (True, None)
    """
    if isinstance(value, TimeModel):
        return value
    if value is True:
        return TimeModel.default()
    if value is False or value is None:
        return None
    if isinstance(value, Mapping):
        return TimeModel.from_dict(value)
    if isinstance(value, (str, os.PathLike)):
        return TimeModel.from_json(value)
    raise TimeModelError(f"time must be True, False, a TimeModel, a dict or a JSON file, not {value!r}")
