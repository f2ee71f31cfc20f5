"""Synthetic stand-ins for the paper's two experiments (appendix B.1), generated from a seed.

Both return the *raw* table (counts before ``log(1 + x)``, text labels); the built-in
loader runs them through ``from_frame`` with the paper's preprocessing, so the report
shows every step as it would for an upload. Generation is vectorised: each table takes
a fraction of a second.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BUZZ_WINDOWS = 7
BUZZ_COUNT_FAMILIES = ("nac", "na", "ncd", "ai", "nad")
BUZZ_RATIO_FAMILIES = ("as_na", "as_nac", "bl", "cs", "at", "adl")
BUZZ_COLUMNS = tuple(
    f"{family}_t{t}" for family in BUZZ_COUNT_FAMILIES + BUZZ_RATIO_FAMILIES for t in range(1, BUZZ_WINDOWS + 1)
)
BUZZ_TARGET = "buzz"

INTRUSION_HEAVY = ("duration", "src_bytes", "dst_bytes")
INTRUSION_COLUMNS = (
    *INTRUSION_HEAVY,
    "land",
    "wrong_fragment",
    "urgent",
    "hot",
    "num_failed_logins",
    "logged_in",
    "num_compromised",
    "root_shell",
    "su_attempted",
    "num_root",
    "num_file_creations",
    "num_shells",
    "num_access_files",
    "num_outbound_cmds",
    "is_host_login",
    "is_guest_login",
    "count",
    "srv_count",
    "serror_rate",
    "srv_serror_rate",
    "rerror_rate",
    "srv_rerror_rate",
    "same_srv_rate",
    "diff_srv_rate",
    "srv_diff_host_rate",
    "dst_host_count",
    "dst_host_srv_count",
    "dst_host_same_srv_rate",
    "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate",
    "dst_host_srv_diff_host_rate",
    "dst_host_serror_rate",
    "dst_host_srv_serror_rate",
    "dst_host_rerror_rate",
    "dst_host_srv_rerror_rate",
)
INTRUSION_TARGET = "label"
INTRUSION_POSITIVE = "attack"

# Connection kinds: normal, SYN flood (neptune-like), ICMP echo flood (smurf-like),
# probing, and remote-to-local attacks that look like normal sessions (the hard part).
_KIND_SHARES = (0.40, 0.22, 0.22, 0.08, 0.08)


def synthetic_buzz(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Raw table shaped like the paper's Twitter buzz task: 77 activity columns and a ``buzz`` count.

    Each post has a log-activity level drawn uniformly from [3, 10], so the raw counts are
    log-uniform over about 20 to 22,000 (heavy-tailed). Per window ``t = 1…7``: tweet count
    ``nac`` ≈ e^level, author count ``na`` ≈ e^(level − 3), three sparse small counts
    (``ncd``, ``ai``, ``nad``) and six ratios in [0, 1]. The target is a count whose
    ``log(1 + ·)`` is a sparse linear function of four log-features plus Gaussian noise
    (standard deviation 0.3): ``0.3·nac_t6 + 0.5·nac_t7 + 0.2·na_t7 + 0.5·as_na_t7`` on the
    ``log(1 + ·)`` scale.
    """
    windows = BUZZ_WINDOWS
    level = rng.uniform(3.0, 10.0, n)[:, None] + 0.3 * rng.standard_normal((n, windows))
    nac = np.floor(np.exp(level + 0.2 * rng.standard_normal((n, windows))))
    na = np.floor(np.exp(level - 3.0 + 0.3 * rng.standard_normal((n, windows))))
    small_rate = np.exp((level - 10.0) / 2)[:, None, :] * np.array([1.0, 0.5, 2.0])[None, :, None]
    small = rng.poisson(small_rate).astype(np.float64)
    ratios = 1.0 - rng.random((n, len(BUZZ_RATIO_FAMILIES), windows)) ** (1 / 8)  # Beta(1, 8) by inversion
    raw = np.concatenate([nac[:, None, :], na[:, None, :], small, ratios], axis=1).reshape(n, -1)
    signal = (
        0.3 * np.log1p(nac[:, 5])
        + 0.5 * np.log1p(nac[:, 6])
        + 0.2 * np.log1p(na[:, 6])
        + 0.5 * np.log1p(ratios[:, 0, 6])
    )
    log_buzz = np.maximum(signal + 0.3 * rng.standard_normal(n), 0.0)
    frame = pd.DataFrame(raw, columns=list(BUZZ_COLUMNS))
    frame[BUZZ_TARGET] = np.floor(np.expm1(log_buzz))
    return frame


def synthetic_intrusion(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Raw table shaped like the paper's KDD-99 task: 38 connection features and an attack/normal label.

    Each row is one of five connection kinds (normal 40 %, SYN flood 22 %, ICMP flood 22 %,
    probe 8 %, remote-to-local 8 %); every column is drawn from a kind-specific
    distribution: heavy-tailed byte counts and durations (log-normal), binary flags,
    rare event counts (Poisson), connection counts capped at 511 and 255 as in KDD-99,
    and rates in [0, 1] (beta). Remote-to-local attacks resemble normal sessions, so
    the classes overlap.
    """
    kind = rng.choice(len(_KIND_SHARES), size=n, p=_KIND_SHARES)

    def by_kind(per_kind: tuple[float, ...]) -> np.ndarray:
        return np.asarray(per_kind)[kind]

    def lognormal(mu: tuple[float, ...], sd: tuple[float, ...]) -> np.ndarray:
        return np.floor(np.exp(by_kind(mu) + by_kind(sd) * rng.standard_normal(n)))

    def flag(p: tuple[float, ...]) -> np.ndarray:
        return (rng.random(n) < by_kind(p)).astype(np.float64)

    def events(rate: tuple[float, ...]) -> np.ndarray:
        return rng.poisson(by_kind(rate)).astype(np.float64)

    def rate(a: tuple[float, ...], b: tuple[float, ...]) -> np.ndarray:
        return rng.beta(by_kind(a), by_kind(b))

    def capped(mean: tuple[float, ...], sd: tuple[float, ...], cap: float) -> np.ndarray:
        return np.clip(np.round(by_kind(mean) + by_kind(sd) * rng.standard_normal(n)), 0, cap)

    serror = ((0.1, 8, 0.1, 0.5, 0.1), (5, 0.5, 5, 2, 5))
    rerror = ((0.1, 0.3, 0.1, 2, 0.2), (5, 2, 5, 2, 5))
    columns = {
        "duration": lognormal((1.0, -3, -3, -1, 3.0), (2.0, 0.5, 0.5, 1.0, 2.0)),
        "src_bytes": lognormal((5.5, -3, 6.9, 1.0, 5.5), (1.2, 0.5, 0.05, 1.5, 1.5)),
        "dst_bytes": lognormal((7.0, -3, -3, 0.0, 6.0), (1.5, 0.5, 0.5, 1.5, 2.0)),
        "land": flag((0.0005, 0.002, 0, 0.001, 0.0005)),
        "wrong_fragment": events((0.001, 0, 0.01, 0.01, 0.002)),
        "urgent": events((0.0005, 0, 0, 0, 0.005)),
        "hot": events((0.2, 0, 0, 0.01, 0.8)),
        "num_failed_logins": events((0.001, 0, 0, 0, 0.05)),
        "logged_in": flag((0.75, 0, 0, 0.05, 0.7)),
        "num_compromised": events((0.01, 0, 0, 0, 0.1)),
        "root_shell": flag((0.001, 0, 0, 0, 0.02)),
        "su_attempted": flag((0.001, 0, 0, 0, 0.005)),
        "num_root": events((0.01, 0, 0, 0, 0.1)),
        "num_file_creations": events((0.01, 0, 0, 0, 0.1)),
        "num_shells": events((0.0005, 0, 0, 0, 0.01)),
        "num_access_files": events((0.005, 0, 0, 0, 0.02)),
        "num_outbound_cmds": events((0, 0, 0, 0, 0.0005)),
        "is_host_login": flag((0.0005, 0, 0, 0, 0.002)),
        "is_guest_login": flag((0.005, 0, 0, 0, 0.1)),
        "count": capped((8, 200, 500, 80, 6), (8, 80, 15, 100, 6), 511),
        "srv_count": capped((10, 15, 500, 5, 8), (10, 10, 15, 10, 8), 511),
        "serror_rate": rate(*serror),
        "srv_serror_rate": rate(*serror),
        "rerror_rate": rate(*rerror),
        "srv_rerror_rate": rate(*rerror),
        "same_srv_rate": rate((8, 0.5, 10, 0.5, 6), (0.5, 8, 0.1, 4, 0.8)),
        "diff_srv_rate": rate((0.3, 1, 0.1, 3, 0.5), (8, 8, 10, 2, 8)),
        "srv_diff_host_rate": rate((0.5, 0.1, 0.1, 1, 0.5), (4, 5, 10, 3, 4)),
        "dst_host_count": capped((150, 255, 255, 200, 120), (100, 5, 5, 80, 100), 255),
        "dst_host_srv_count": capped((180, 15, 255, 10, 60), (80, 10, 5, 20, 60), 255),
        "dst_host_same_srv_rate": rate((5, 0.3, 10, 0.5, 2), (1, 6, 0.1, 4, 2)),
        "dst_host_diff_srv_rate": rate((0.3, 1, 0.1, 3, 0.5), (8, 8, 10, 2, 6)),
        "dst_host_same_src_port_rate": rate((0.5, 0.1, 10, 2, 0.5), (4, 5, 0.2, 3, 4)),
        "dst_host_srv_diff_host_rate": rate((0.3, 0.1, 0.1, 0.5, 0.5), (6, 5, 10, 4, 4)),
        "dst_host_serror_rate": rate(*serror),
        "dst_host_srv_serror_rate": rate(*serror),
        "dst_host_rerror_rate": rate(*rerror),
        "dst_host_srv_rerror_rate": rate(*rerror),
    }
    frame = pd.DataFrame({name: columns[name] for name in INTRUSION_COLUMNS})
    frame[INTRUSION_TARGET] = np.where(kind == 0, "normal", INTRUSION_POSITIVE)
    return frame
