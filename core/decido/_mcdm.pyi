from array import array

import numpy as np
from numpy.typing import NDArray

def competition_ranks(
    score: NDArray[np.float64], higher_is_better: bool, rel_tol: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...

FAST_MAX_OPTIONS: int

_F = NDArray[np.float64]

def topsis_vector(
    X: _F, benefit: bytes, w: _F, constant: bytes | None
) -> tuple[_F, _F, _F, _F, _F]: ...
def wsm_minmax(
    X: _F, benefit: bytes, w: _F, constant: bytes | None
) -> tuple[_F, _F, _F] | None: ...
def moora(X: _F, benefit: bytes, w: _F) -> tuple[_F, _F, _F]: ...
def vikor(X: _F, benefit: bytes, w: _F, v: float) -> tuple[_F, _F, _F, _F]: ...
def spotis(X: _F, benefit: bytes, w: _F, bounds: _F) -> tuple[_F, _F, _F]: ...

RANK_TOPSIS_VECTOR: int
RANK_WSM_MINMAX: int
RANK_MOORA: int

def rank_values(
    values: array[float], m: int, k: int, kernel: int, benefit: bytes,
    weights: list[float], higher_is_better: bool, rel_tol: float,
) -> tuple[bytes, list[int], list[int], list[float]] | None: ...
