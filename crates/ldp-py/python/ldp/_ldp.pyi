"""Type stubs of the native module `ldp._ldp` (re-exported by `ldp`)."""

from os import PathLike
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Union, final, overload

import numpy as np
import numpy.typing as npt

from ._categories import Categories

__version__: str

_ProtocolName = Literal[
    "grr", "ss", "sue", "oue", "blh", "olh", "she", "the", "ass", "aue", "alh", "athe",
    "hr", "hm", "flh", "cms", "hcms", "dbitflip",
]
# One number for a family with one parameter, or values by name for any family.
_ParamArg = Union[float, dict[str, float], str]
_EstimatorName = Literal[
    "unbiased",
    "base-pos",
    "norm",
    "clip",
    "norm-cut",
    "norm-sub",
    "simplex",
    "base-cut",
    "mle-apx",
    "ibu",
    "ibu-squarem",
    "mle",
]
# What a reader does with an invalid report: refuse the input, or skip it and count it.
_OnInvalid = Literal["refuse", "skip"]
_StrategyName = Literal[
    "weighted", "utopia", "elbow", "eps-constraint", "hypervolume", "tchebycheff"
]
_Items = Union[npt.ArrayLike, Sequence[int]]

class LdpError(ValueError): ...
class ParamError(LdpError): ...
class ItemError(LdpError): ...
class ReportError(LdpError): ...
class AggregateError(LdpError): ...
class TuningError(LdpError): ...

@final
class Mechanism:
    @property
    def protocol(self) -> str: ...
    @property
    def k(self) -> int: ...
    @property
    def eps(self) -> float: ...
    @property
    def param(self) -> Union[None, int, float, dict[str, Union[int, float]]]: ...
    @property
    def spec(self) -> str: ...
    @property
    def tuning(self) -> Optional[dict[str, Any]]: ...
    @staticmethod
    def from_spec(spec: Union[str, bytes], protocol: Optional[str] = None) -> Mechanism: ...
    def perturb(
        self, items: Any, seed: Optional[int] = None, *, categories: Optional[Categories] = None
    ) -> Reports: ...
    def aggregator(
        self,
        she_clip: Union[None, float, Literal["none", "recommended"]] = None,
        *,
        categories: Optional[Categories] = None,
    ) -> Aggregator: ...
    def probabilities(self) -> Optional[tuple[float, float]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Reports:
    @property
    def mechanism(self) -> Mechanism: ...
    @property
    def shape(self) -> Literal["value", "seed_value", "set", "vector"]: ...
    @property
    def y(self) -> npt.NDArray[np.uint32]: ...
    @property
    def seed(self) -> npt.NDArray[np.uint32]: ...
    @property
    def offsets(self) -> npt.NDArray[np.int64]: ...
    @property
    def indices(self) -> npt.NDArray[np.uint32]: ...
    @property
    def values(self) -> npt.NDArray[np.float64]: ...
    @property
    def skipped(self) -> dict[str, dict[str, Any]]: ...
    @property
    def categories(self) -> Optional[Categories]: ...
    def with_categories(self, categories: Optional[Categories]) -> Reports: ...
    def arrays(self) -> dict[str, np.ndarray]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: Union[int, slice], /) -> Any: ...
    def __eq__(self, other: object, /) -> bool: ...
    @staticmethod
    def concat(parts: list[Reports]) -> Reports: ...
    @staticmethod
    def from_arrays(
        mechanism: Mechanism,
        *,
        y: Optional[npt.ArrayLike] = None,
        seed: Optional[npt.ArrayLike] = None,
        offsets: Optional[npt.ArrayLike] = None,
        indices: Optional[npt.ArrayLike] = None,
        values: Optional[npt.ArrayLike] = None,
        on_invalid: _OnInvalid = "refuse",
    ) -> Reports: ...
    def to_jsonl(self, path: Union[str, PathLike[str]]) -> None: ...
    @staticmethod
    def from_jsonl(
        path: Union[str, PathLike[str]], mechanism: Mechanism, on_invalid: _OnInvalid = "refuse"
    ) -> Reports: ...
    def to_arrow(self, encoding: Literal["list", "bitmap"] = "list") -> Any: ...
    @staticmethod
    def from_arrow(
        data: Any, mechanism: Optional[Mechanism] = None, on_invalid: _OnInvalid = "refuse"
    ) -> Reports: ...
    @staticmethod
    def read_parquet(
        path: Union[str, PathLike[str]],
        mechanism: Optional[Mechanism] = None,
        on_invalid: _OnInvalid = "refuse",
    ) -> Reports: ...

@final
class Aggregator:
    @property
    def mechanism(self) -> Mechanism: ...
    @property
    def n(self) -> int: ...
    @property
    def counts(self) -> Optional[npt.NDArray[np.uint64]]: ...
    @property
    def sums(self) -> Optional[npt.NDArray[np.float64]]: ...
    @property
    def categories(self) -> Optional[Categories]: ...
    def add(self, reports: Reports) -> None: ...
    def merge(self, other: Aggregator) -> None: ...
    @overload
    def estimate(
        self,
        estimator: _EstimatorName = "unbiased",
        *,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
        labelled: Literal[False] = False,
    ) -> npt.NDArray[np.float64]: ...
    @overload
    def estimate(
        self,
        estimator: _EstimatorName = "unbiased",
        *,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
        labelled: Literal[True],
    ) -> Any: ...
    def fit(
        self,
        estimator: _EstimatorName = "unbiased",
        *,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
    ) -> dict[str, Any]: ...

def mechanism(
    protocol: _ProtocolName,
    k: int,
    eps: float,
    param: Optional[_ParamArg] = None,
    *,
    w_asr: Optional[float] = None,
    w_epg: Optional[float] = None,
    w_bits: Optional[float] = None,
    search: Optional[Literal["paper", "refined"]] = None,
    strategy: Optional[_StrategyName] = None,
    asr_max: Optional[float] = None,
    epg_max: Optional[float] = None,
    bits_max: Optional[float] = None,
    lh_asr: Optional[Literal["paper", "exact"]] = None,
    beta: Optional[float] = None,
    targets: Optional[int] = None,
    target_mass: Optional[float] = None,
    asr_after: Optional[int] = None,
    precision_max: Optional[float] = None,
    change_rate: Optional[float] = None,
) -> Mechanism: ...
def analyze(
    protocols: Union[str, Sequence[str]],
    k: Union[int, Sequence[int]],
    eps: Union[float, Sequence[float]],
    param: Optional[_ParamArg] = None,
    *,
    lh_asr: Optional[Literal["paper", "exact"]] = None,
    beta: Optional[float] = None,
    targets: Optional[int] = None,
    target_mass: Optional[float] = None,
    w_asr: Optional[float] = None,
    w_epg: Optional[float] = None,
    w_bits: Optional[float] = None,
    search: Optional[Literal["paper", "refined"]] = None,
    strategy: Optional[_StrategyName] = None,
    asr_max: Optional[float] = None,
    bits_max: Optional[float] = None,
    change_rate: Optional[float] = None,
    bias_users: Optional[float] = None,
    bias_zipf: Optional[float] = None,
) -> dict[str, Any]: ...
def tune(
    protocol: Union[_ProtocolName, Literal["all"]],
    k: int,
    eps: float,
    *,
    w_asr: Optional[float] = None,
    w_epg: Optional[float] = None,
    w_bits: Optional[float] = None,
    search: Optional[Literal["paper", "refined"]] = None,
    strategy: Optional[_StrategyName] = None,
    asr_max: Optional[float] = None,
    epg_max: Optional[float] = None,
    bits_max: Optional[float] = None,
    lh_asr: Optional[Literal["paper", "exact"]] = None,
    beta: Optional[float] = None,
    targets: Optional[int] = None,
    target_mass: Optional[float] = None,
    asr_after: Optional[int] = None,
    precision_max: Optional[float] = None,
    change_rate: Optional[float] = None,
    bias_users: Optional[float] = None,
    bias_zipf: Optional[float] = None,
) -> dict[str, Any]: ...
def frontier(
    protocol: _ProtocolName,
    k: int,
    eps: float,
    objectives: Optional[Sequence[Literal["asr", "mse", "epg", "bits"]]] = None,
    *,
    lh_asr: Optional[Literal["paper", "exact"]] = None,
    beta: Optional[float] = None,
    targets: Optional[int] = None,
    target_mass: Optional[float] = None,
) -> dict[str, npt.NDArray[np.float64]]: ...
def attack(
    reports: Reports, *, seed: Optional[int] = None, prior: Optional[npt.ArrayLike] = None
) -> npt.NDArray[np.uint32]: ...
def simulate(
    mechanism: Mechanism,
    items: Optional[_Items] = None,
    *,
    dataset: Optional[Literal["adult-age"]] = None,
    runs: int = 10,
    seed: int = 0,
    attack: Literal["paper", "map"] = "paper",
    prior: Union[None, npt.ArrayLike, Literal["data"]] = None,
    poison: Optional[Literal["mga", "ria", "roa"]] = None,
    beta: Optional[float] = None,
    targets: Optional[Sequence[int]] = None,
    she_clip: Union[None, float, Literal["none", "recommended"]] = None,
) -> dict[str, Any]: ...

_LongitudinalName = Literal["l-grr", "l-sue", "l-oue", "l-osue", "l-soue", "l-adp"]

@final
class Longitudinal:
    @property
    def protocol(self) -> _LongitudinalName: ...
    @property
    def k(self) -> int: ...
    @property
    def eps_perm(self) -> float: ...
    @property
    def eps_1(self) -> float: ...
    @property
    def variance(self) -> float: ...
    @property
    def asr_limit(self) -> float: ...
    @property
    def report_mechanism(self) -> Mechanism: ...
    def rounds(self) -> dict[str, float]: ...
    def asr_after(self, collections: int) -> float: ...
    def collect(
        self,
        items: _Items,
        collections: int = 1,
        seed: Optional[int] = None,
        *,
        dtype: Literal["float64", "uint8"] = "float64",
    ) -> list[np.ndarray]: ...
    def collect_reports(
        self, items: _Items, collections: int = 1, seed: Optional[int] = None
    ) -> list[Reports]: ...
    def estimate(
        self,
        reports: npt.ArrayLike,
        estimator: _EstimatorName = "unbiased",
        *,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
    ) -> npt.NDArray[np.float64]: ...

def longitudinal(
    protocol: _LongitudinalName, k: int, eps_perm: float, eps_1: float
) -> Longitudinal: ...
@overload
def asr_after(target: Union[Mechanism, Longitudinal], collections: int) -> Optional[float]: ...
@overload
def asr_after(
    target: Union[Mechanism, Longitudinal], collections: Sequence[int]
) -> list[Optional[float]]: ...
def simulate_linked(
    target: Union[Mechanism, Longitudinal],
    collections: Sequence[int],
    items: Optional[_Items] = None,
    *,
    dataset: Optional[Literal["adult-age"]] = None,
    users: Optional[int] = None,
    runs: int = 1,
    seed: int = 0,
) -> dict[str, Any]: ...
def simulate_changes(
    target: Union[Mechanism, Longitudinal],
    days: int,
    change_rate: float,
    items: Optional[_Items] = None,
    *,
    dataset: Optional[Literal["adult-age"]] = None,
    users: Optional[int] = None,
    runs: int = 1,
    seed: int = 0,
    permanent: bool = False,
) -> dict[str, Any]: ...
def replay_changes(
    target: Union[Mechanism, Longitudinal],
    trajectories: Union[Sequence[Sequence[int]], npt.NDArray[np.integer[Any]]],
    *,
    runs: int = 1,
    seed: int = 0,
    permanent: bool = False,
) -> dict[str, Any]: ...

def audit(
    client: Union[Mechanism, Longitudinal, Multidim, Callable[[npt.NDArray[np.int64]], Any]],
    *,
    shape: Optional[Literal["grr", "set", "lh", "vector"]] = None,
    k: Optional[int] = None,
    eps: Optional[float] = None,
    g: Optional[int] = None,
    trials: int = 1_000_000,
    alpha: float = 0.01,
    pairs: Union[Literal["extremes", "cycle"], Sequence[tuple[int, int]], None] = None,
    statistics: Optional[Sequence[Literal["lr", "guess", "first"]]] = None,
    seed: int = 0,
    batch: int = 16_384,
    collections: Optional[int] = None,
) -> dict[str, Any]: ...
def exact_audit(
    mechanism: Union[Mechanism, Longitudinal, Multidim],
    collections: Optional[Sequence[int]] = None,
) -> dict[str, Any]: ...
def ledger(
    surveys: Any,
    records: Any = None,
    *,
    reports: Union[str, PathLike[str], Iterable[Union[str, PathLike[str]]], None] = None,
    roster: Optional[Iterable[object]] = None,
    delta: Optional[float] = None,
    limit: Optional[float] = None,
    day_limit: Optional[float] = None,
) -> list[dict[str, Any]]: ...
@overload
def shuffle(
    users: int,
    delta: float,
    *,
    eps0: float,
    central_eps: None = None,
    grr_k: Optional[int] = None,
) -> dict[str, Optional[float]]: ...
@overload
def shuffle(
    users: int,
    delta: float,
    *,
    eps0: None = None,
    central_eps: float,
    grr_k: Optional[int] = None,
) -> dict[str, float]: ...

__all__ = [
    "Mechanism",
    "Reports",
    "Aggregator",
    "Longitudinal",
    "Multidim",
    "MultidimReports",
    "mechanism",
    "analyze",
    "tune",
    "frontier",
    "attack",
    "simulate",
    "_aggregator_from_state",
    "longitudinal",
    "asr_after",
    "simulate_linked",
    "simulate_changes",
    "replay_changes",
    "_reports_from_pickle",
    "audit",
    "exact_audit",
    "shuffle",
    "ledger",
    "multidim",
    "_table",
    "__version__",
    "LdpError",
    "ParamError",
    "ItemError",
    "ReportError",
    "AggregateError",
    "TuningError",
]

# Unpickling helpers (what `__reduce__` returns), not for direct use.
def _aggregator_from_state(
    state: str, protocol: str, clip: Optional[float], labels: Optional[tuple[str, bool]] = None
) -> Aggregator: ...
def _reports_from_pickle(stream: bytes, mechanism: Mechanism, skipped: str) -> Reports: ...

_SolutionName = Literal["spl", "smp", "rsfd", "rsfd-z", "rsrfd"]

@final
class Multidim:
    @property
    def protocol(self) -> str: ...
    @property
    def solution(self) -> _SolutionName: ...
    @property
    def eps(self) -> float: ...
    @property
    def report_eps(self) -> float: ...
    @property
    def domains(self) -> list[int]: ...
    @property
    def names(self) -> Optional[list[str]]: ...
    @property
    def labels(self) -> Optional[list[list[str]]]: ...
    @property
    def params(self) -> list[Union[None, int, float, dict[str, Union[int, float]]]]: ...
    @property
    def priors(self) -> Optional[list[npt.NDArray[np.float64]]]: ...
    def mechanism(self, attribute: Union[int, str]) -> Mechanism: ...
    def perturb(self, items: Any, seed: Optional[int] = None) -> MultidimReports: ...
    def estimate(
        self,
        reports: MultidimReports,
        estimator: _EstimatorName = "unbiased",
        *,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
    ) -> Union[list[npt.NDArray[np.float64]], dict[str, Any]]: ...
    def asr(self, lh_asr: Literal["paper", "exact"] = "paper") -> npt.NDArray[np.float64]: ...
    def asr_joint(self, lh_asr: Literal["paper", "exact"] = "paper") -> float: ...
    def variance(
        self,
        attribute: Union[int, str],
        item: int,
        n: float,
        f: float,
        population: Literal["fixed", "sampled"] = "fixed",
    ) -> float: ...
    def simulate(self, data: Any, *, runs: int = 10, seed: int = 0) -> Any: ...
    def __len__(self) -> int: ...

@final
class MultidimReports:
    @property
    def multidim(self) -> Multidim: ...
    @property
    def attribute(self) -> Optional[npt.NDArray[np.uint32]]: ...
    def reports(self, attribute: Union[int, str]) -> Reports: ...
    def to_jsonl(self) -> str: ...
    @staticmethod
    def from_jsonl(multidim: Multidim, text: str) -> MultidimReports: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> dict[str, Any]: ...

def multidim(
    protocol: _ProtocolName,
    eps: float,
    domains: Sequence[int],
    solution: _SolutionName = "smp",
    prior: Optional[Sequence[npt.ArrayLike]] = None,
    param: Optional[_ParamArg] = None,
    *,
    names: Optional[Sequence[str]] = None,
    labels: Optional[Sequence[Sequence[str]]] = None,
    series: bool = False,
    **options: Any,
) -> Multidim: ...
def _table(name: str) -> tuple[list[str], list[list[str]], npt.NDArray[np.uint32]]: ...
