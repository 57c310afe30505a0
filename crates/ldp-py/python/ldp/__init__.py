"""Attack-aware local differential privacy: the Python package of the ldp toolkit.

The eight frequency-estimation protocols of Arcolezi and Gambs (GRR, SS, SUE, OUE, BLH,
OLH, SHE, THE), the four adaptive ones (ASS, AUE, ALH, ATHE) and the oracles for large
domains (Hadamard response HR, Hadamard mechanism HM, fast local hashing FLH, Apple's
count-mean sketches CMS and HCMS); their closed-form attackability (ASR), utility (MSE)
and poisoning gain (EPG), tuning, Pareto frontiers, and the attacks measured on real
reports. Everything runs in Rust, in bulk, with the GIL
released: no Python loop over users.

>>> import ldp, numpy as np
>>> m = ldp.mechanism("olh", k=100, eps=4.0)
>>> reports = m.perturb(np.arange(10_000) % 100, seed=1)
>>> server = m.aggregator()
>>> server.add(reports)
>>> f = server.estimate("norm-sub")
>>> round(float(f.sum()), 6)
1.0

Estimators, and their names in multi-freq-ldpy where they coincide:

============  ===========================================  ==================
ldp           what it does                                 multi-freq-ldpy
============  ===========================================  ==================
unbiased      the raw unbiased estimate (may be negative)  (none)
clip          clip negatives, renormalize to sum one       MI (``*_Aggregator_MI``)
norm-sub      Norm-Sub (Wang et al. 2020)                  (none)
simplex       projection onto the probability simplex      (none)
============  ===========================================  ==================

Repeated collection: ``ldp.longitudinal`` builds the memoized protocols of Arcolezi et al.
(2021) (L-GRR, L-SUE, L-OUE, L-OSUE, L-SOUE, L-ADP), whose reports match multi-freq-ldpy's
``long_freq_est`` clients, and LOLOHA's local hashing (L-OLH, L-BLH, Arcolezi et al. 2023); ``ldp.asr_after`` gives the exact ASR of the attack that links
t reports of one value, and ``ldp.simulate_linked`` measures it. ``ldp.simulate_changes``
measures the change detector of the paper's Example 2 on values that change day to day
(fresh reports, memoized protocols, permanent memos such as dBitFlipPM of ``dbitflip``),
and ``ldp.replay_changes`` on each user's recorded values over consecutive days.

Several attributes per user: ``ldp.multidim`` builds the SPL, SMP, RS+FD, RS+FD-z and
RS+RFD clients of ``ldp perturb --attributes`` over sizes, a dict, a pandas DataFrame or a
shipped table (``ldp.dataset``); its ``estimate`` takes the fakes out, ``simulate``
measures what ``ldp simulate --dataset ... --solution ...`` does.

Labels: ``ldp.Categories`` maps labels (a list's, a pandas categorical's) to the items
0..k-1 and back; reports carry them into Arrow and Parquet metadata, and
``Aggregator.estimate(..., labelled=True)`` returns a pandas Series indexed by them.

LH reports hash ``xxh32(str(v), seed) % g``, byte-compatible with multi-freq-ldpy and
pure-ldp; their 64-bit seeds are reduced mod 2^32 (what python-xxhash does) by
``Reports.from_arrays``. multi-freq-ldpy 0.2.5 needs ``xxhash<4``.
"""

from . import _ldp
from ._categories import Categories
from ._table import Table
from ._multidim import dataset, multidim
from ._ldp import (
    AggregateError,
    Aggregator,
    ItemError,
    LdpError,
    Longitudinal,
    Mechanism,
    Multidim,
    MultidimReports,
    ParamError,
    ReportError,
    Reports,
    TuningError,
    __version__,
    asr_after,
    attack,
    audit,
    exact_audit,
    ledger,
    longitudinal,
    mechanism,
    simulate,
    simulate_changes,
    replay_changes,
    simulate_linked,
    shuffle,
    tune,
)

__all__ = [
    "AggregateError",
    "Aggregator",
    "Categories",
    "ItemError",
    "LdpError",
    "Longitudinal",
    "Mechanism",
    "Multidim",
    "MultidimReports",
    "ParamError",
    "ReportError",
    "Reports",
    "Table",
    "TuningError",
    "__version__",
    "analyze",
    "asr_after",
    "attack",
    "audit",
    "dataset",
    "exact_audit",
    "frontier",
    "ledger",
    "longitudinal",
    "mechanism",
    "multidim",
    "simulate",
    "simulate_changes",
    "replay_changes",
    "simulate_linked",
    "shuffle",
    "tune",
]


def _as_frame(columns, frame):
    if frame:
        import warnings

        warnings.warn(
            "analyze(frame=True) is deprecated: analyze returns an ldp.Table; call its to_pandas()",
            DeprecationWarning,
            stacklevel=3,
        )
        return Table(columns).to_pandas()
    return Table(columns)


def analyze(protocols, k, eps, param=None, *, frame=None, **options):
    """Closed-form ASR, MSE and EPG, report size and costs, over protocols x k x eps.

    The values are those of ``ldp analyze`` (the same closed forms, computed in parallel).

    :param protocols: a name, a list of names, or ``"all"`` (every protocol: the paper's
        twelve, then the large-domain oracles).
    :param k: a domain size or a list of them.
    :param eps: a privacy budget or a list of them.
    :param param: the family parameters, for a single protocol: a number for a family
        with one, or a dict by name (``{"g": 8, "seeds": 500}``) for any.
    :param frame: deprecated: ``True`` returns ``.to_pandas()`` of the table. The result
        no longer depends on whether pandas is installed.
    :param options: ``lh_asr`` (the LH ASR form: "paper", the default, or "exact"), ``beta``, ``targets``,
        ``target_mass`` (the poisoning attack of EPG), for adaptive protocols the
        tuning arguments ``w_asr``, ``w_epg``, ``w_bits``, ``search``, ``strategy``, and
        ``asr_max``, ``bits_max``: keep only the rows at most these (as ``ldp analyze
        --asr-max``, ``--bits-max``; they filter rows, they do not tune), and
        ``change_rate``: add the change detector's closed forms for fresh reports at that
        daily rate of change (columns change_rate, detect, false_alarm, precision; NaN
        where there is none, every family but GRR; ``ldp.simulate_changes`` measures any),
        and ``bias_users``, ``bias_zipf``: the users (default 10,000) and the Zipf exponent
        of their values (default 1.1) behind the bias of FLH and the sketches.
    :return: an ``ldp.Table`` (a mapping of numpy columns, with ``to_pandas()`` and
        ``to_arrow()``): columns protocol, k, eps, param, asr, mse, bias, epg, bits,
        server_cost, client_cost, params (param is NaN where the family has no parameter
        or several; params names every parameter, ``"g=8;seeds=1000"``).

    ``mse`` here is the paper's MSE **for one user** (n = 1): the approximate variance of
    an item's frequency estimate from a single report. With n users the expected MSE is
    ``mse / n``: what ``ldp.simulate`` reports as ``mse_expected`` beside its measured
    ``mse``, both at its n users. FLH and the sketches hash with a fixed public set of
    hashes, which biases every estimate by an amount that does not shrink with n: their
    ``mse`` adds ``bias``, ``bias_users`` times the mean squared bias (in expectation over
    an ideal hash), so that ``mse / bias_users`` is their MSE at that many users.

    >>> import ldp
    >>> t = ldp.analyze(["flh", "olh"], k=1000, eps=1.0, bias_users=200_000)
    >>> float(round(t["mse"][0] / t["mse"][1], 2)), float(t["bias"][1])  # FLH's seeds cost
    (1.87, 0.0)

    >>> import ldp
    >>> cols = ldp.analyze(["grr", "oue"], k=[10, 100], eps=1.0)
    >>> cols["protocol"].tolist()
    ['grr', 'grr', 'oue', 'oue']
    """
    return _as_frame(_ldp.analyze(protocols, k, eps, param, **options), frame)


def frontier(protocol, k, eps, objectives=None, **options) -> Table:
    """The Pareto frontier of an adaptive protocol's parameter, as ``ldp frontier``.

    :return: an ``ldp.Table``: ``param`` and one column per objective (``asr`` and
        ``mse`` by default), one row per frontier point, in increasing parameter order.

    >>> import ldp
    >>> f = ldp.frontier("alh", 100, 4.0)
    >>> f.columns
    ['param', 'asr', 'mse']
    """
    return Table(_ldp.frontier(protocol, k, eps, objectives, **options))
