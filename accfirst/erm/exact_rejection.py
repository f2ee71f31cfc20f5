"""Exact accept/reject coins for a Gaussian bump under a strongly convex energy, on ideal random numbers.

docs/mathematics.md#exact-coins-for-the-logistic-posterior [derived]. The target is ∝ exp(−F(v)) with F(v) = f(v) +
‖v − y‖²/(2η) (η = ∞: F = f), f the logistic energy of ``accfirst.erm.logistic_energy`` and y a point of the chain. F
is (1/c)-strongly convex, 1/c = m + 1/η, so a Gaussian bump exp(−b − ‖v − a − ρy‖²/(2σ²)) lies below exp(−F)
(``certified_envelope``): proposals v = a + ρy + σz, each kept with probability e^{−D(v)}, D = F(v) − b − ‖z‖²/2 ≥ 0, are
exact draws of the target. Every number is ideal — the Gaussians z from ideal uniforms
(``accfirst.mechanisms.ideal_noise``), each coin an ideal exponential E = −ln U compared with the exact D — and each
decision is taken from float64 enclosures where they settle it (``_coin_fast``), else exactly (``RejectionSampler``,
the chain's state enclosed again from its draws by ``History``, the energy in decimal arithmetic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.logistic_energy import Energy
from accfirst.errors import AccFirstError
from accfirst.mechanisms.draws import own_generator, uniform_cells
from accfirst.mechanisms.ideal_noise import (
    GROW,
    ROUNDOFF,
    Interval,
    UniformBits,
    add,
    draw_gaussian,
    exact,
    gaussian_exact,
    gaussian_fast,
    laplace_exact,
    laplace_fast,
    multiply,
    negate,
    resolve,
)

# Proposals a rejection loop draws per pass for each draw still pending.
MAX_BATCH = 256
# The proposal's variance exceeds the envelope's 1/(curvature) by this share: room for float64 in the envelope.
SPREAD_ROOM = 2.0**-20


def norms(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """‖r‖₂ of each row."""
    norms: NDArray[np.float64] = np.sqrt(np.einsum("kp,kp->k", rows, rows))
    return norms


def gamma(k: int) -> float:
    return k * ROUNDOFF / (1 - k * ROUNDOFF)


class IdealGaussians:
    """``count`` ideal standard Gaussian vectors of p values, each in Box–Muller pairs of its own."""

    def __init__(self, rng: np.random.Generator, count: int, p: int) -> None:
        self.p, self.even = p, p + p % 2
        self.cells = draw_gaussian(rng, count * self.even).reshape(2, count, self.even // 2)
        mid, rad = gaussian_fast(self.cells.reshape(2, -1), count * self.even)
        self.mid = mid.reshape(count, self.even)[:, :p]
        self.rad = rad.reshape(count, self.even)[:, :p]


def _exact_vector(
    bits: UniformBits, key: object, cells: NDArray[np.int64], p: int, precision: int
) -> list[Interval] | None:
    """Enclosures of the p Gaussian values of one vector's pairs ``cells`` (2, ⌈p/2⌉), or ``None`` while unbounded."""
    values = []
    for j in range(p):
        pair = (int(cells[0, j // 2]), int(cells[1, j // 2]))
        value = gaussian_exact(bits, (key, j // 2), pair, j % 2 == 1, precision)
        if value is None:
            return None
        values.append(value)
    return values


def _affine(*terms: tuple[float, list[Interval]] | NDArray[np.float64]) -> list[Interval]:
    """Σ coefficient·vector, coordinate by coordinate: float vectors enter as they are, (c, intervals) as c times them."""
    parts: list[list[Interval]] = []
    for term in terms:
        if isinstance(term, tuple):
            coefficient, vector = term
            parts.append([multiply(exact(coefficient), value) for value in vector])
        else:
            parts.append([exact(float(value)) for value in term])
    return [add(*column) for column in zip(*parts)]


@dataclass
class Step:
    """One step of every chain: its ξ draws (None on the exact path), proposal offsets a, and the kept proposals."""

    xi: NDArray[np.int64] | None
    offset: NDArray[np.float64]
    kept: NDArray[np.int64]  # the kept proposals' cells, (rows, 2, ⌈p/2⌉)
    serial: NDArray[np.int64]  # the kept proposals' serial numbers


@dataclass
class History:
    """What made each chain's state: enough to enclose it exactly (rare), step by step."""

    start: NDArray[np.int64] | None
    mix: float  # ρ: the proposal mean is a + ρy
    spread: float  # σ: the proposal is a + ρy + σz
    kick: float  # √η: y = u + √η·ξ
    steps: list[Step] = field(default_factory=list)

    def state(self, bits: UniformBits, row: int, done: int, p: int, precision: int) -> list[Interval] | None:
        """An enclosure of chain ``row``'s u after ``done`` steps (done ≥ 1, or 0 with a start)."""
        u = None if self.start is None else _exact_vector(bits, ("start", row), self.start[row], p, precision)
        for k in range(done):
            y = self.proposal_centre(bits, row, k, u, p, precision)
            step = self.steps[k]
            z = _exact_vector(bits, ("z", int(step.serial[row])), step.kept[row], p, precision)
            if y is None or z is None:
                return None
            u = _affine(step.offset[row], (self.mix, y), (self.spread, z))
        return u

    def proposal_centre(
        self, bits: UniformBits, row: int, k: int, u: list[Interval] | None, p: int, precision: int
    ) -> list[Interval] | None:
        """An enclosure of y = u + √η·ξ at step k (zeros on the exact path, where ρ = 0)."""
        xi = self.steps[k].xi if k < len(self.steps) else None
        if xi is None:
            return [exact(0)] * p
        noise = _exact_vector(bits, ("xi", k, row), xi[row], p, precision)
        if u is None or noise is None:
            return None
        return [add(a, b) for a, b in zip(u, _affine((self.kick, noise)))]


@dataclass
class Envelope:
    """The Gaussian bump of one oracle step: proposals a + ρy + σz, kept with probability e^{−D}, D ≥ 0 (per row)."""

    offset: NDArray[np.float64]
    floor: NDArray[np.float64]  # b: F(v) ≥ b + ‖v − a − ρy‖²/(2σ²) for every v
    log_acceptance: NDArray[np.float64]
    anchor: NDArray[np.float64]
    slope: NDArray[np.float64]  # ‖∇f(w)‖ + its error: how fast f can change near w
    eta: float
    mix: float
    spread: float


def certified_envelope(
    energy: Energy,
    anchor: NDArray[np.float64],
    y_mid: NDArray[np.float64],
    y_rad: NDArray[np.float64],
    eta: float,
    log_det: float,
) -> Envelope:
    """The certified envelope of F(v) = f(v) + ‖v − y‖²/(2η) around ``anchor`` w (η = ∞: F = f) [derived].

    F is (1/c)-strongly convex, 1/c = m + 1/η, so F(v) ≥ F(w) − c‖∇F(w)‖²/2 + ‖v − μ*‖²/(2c), μ* = w − c∇F(w).
    The proposal mean μ = a + ρy (a a float vector, ρ = c/η as a float) is within Δ of μ*; with σ² > c,
    ‖v − μ*‖²/(2c) ≥ ‖v − μ‖²/(2σ²) − Δ²/(2(σ² − c)). Every term is bounded from the float64 evaluation at w
    and its error. ``log_det`` bounds ½ log det(∇²F·c) from above (the acceptance's other factor).
    """
    p = energy.p
    at = energy.evaluate(anchor)
    proximal = math.isfinite(eta)
    curvature = energy.convexity + (1 / eta if proximal else 0.0)
    c = 1 / curvature  # within 3·2⁻⁵³
    mix = c / eta if proximal else 0.0
    spread = math.sqrt(c * (1 + SPREAD_ROOM))
    room = spread * spread * (1 - ROUNDOFF) - c * (1 + 4 * ROUNDOFF)  # ≤ σ² − c
    offset = (1 - mix) * anchor - c * at.gradient
    y_reach = math.sqrt(p) * np.max(y_rad, axis=1)
    gap = anchor - y_mid
    quadratic = np.einsum("kp,kp->k", gap, gap) / (2 * eta) if proximal else np.zeros(len(anchor))
    pull = at.gradient + gap / eta if proximal else at.gradient
    slack = 8 * ROUNDOFF * (norms(anchor) + c * norms(at.gradient) + norms(y_mid) + y_reach)
    delta = slack + c * at.gradient_error * (1 + 8 * ROUNDOFF)
    # ∇F(w) = ∇f(w) + (w − y)/η, whose two parts may nearly cancel near the oracle's mode: their float sum's
    # rounding is bounded by their sizes, not by the sum's.
    parts = norms(at.gradient) + (norms(gap) / eta if proximal else 0.0)
    pull_norm = norms(pull) * (1 + 2 * gamma(p)) + 2 * ROUNDOFF * parts + at.gradient_error
    pull_norm += y_reach / eta if proximal else 0.0
    near = np.maximum(norms(gap) * (1 - gamma(p)) - y_reach, 0.0)
    low = at.value - at.error + (near * near / (2 * eta) if proximal else 0.0)
    reach = (norms(gap) + y_reach) ** 2 * (1 + 2 * gamma(p)) / (2 * eta) if proximal else 0.0
    high = at.value + at.error + reach
    floor = low - c * (1 + 4 * ROUNDOFF) * pull_norm**2 / 2 - delta**2 / (2 * room)
    floor -= 16 * ROUNDOFF * (np.abs(at.value) + quadratic + c * pull_norm**2 + 1)
    log_acceptance = floor - high - p / 2 * math.log(spread * spread * (1 + ROUNDOFF) / c) - log_det - 1e-9
    return Envelope(offset, floor, log_acceptance, anchor, norms(at.gradient) + at.gradient_error, eta, mix, spread)


def _coin_fast(
    energy: Energy,
    envelope: Envelope,
    rows: NDArray[np.int64],
    y_mid: NDArray[np.float64],
    y_rad: NDArray[np.float64],
    draws: IdealGaussians,
    uniforms: NDArray[np.int64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """The proposals v = a + ρy + σz of ``rows`` (one per Gaussian vector, in order), their radii, and each coin's
    verdict from float64: 1 keep, 0 reject, −1 not settled (``E`` against D's enclosure)."""
    envelope_rows = rows
    centre = envelope.offset[envelope_rows] + envelope.mix * y_mid[envelope_rows]
    centre_rad = (
        envelope.mix * y_rad[envelope_rows]
        + 2 * ROUNDOFF * (np.abs(centre) + envelope.mix * np.abs(y_mid[envelope_rows]))
    ) * GROW
    v = centre + envelope.spread * draws.mid
    v_rad = (
        centre_rad + envelope.spread * draws.rad + 2 * ROUNDOFF * (np.abs(v) + envelope.spread * np.abs(draws.mid))
    ) * GROW
    at = energy.evaluate(v)
    p = energy.p
    reach = norms(v_rad)
    slope = envelope.slope[envelope_rows] + energy.curvature * norms(v - envelope.anchor[envelope_rows])
    squares_z = np.einsum("kp,kp->k", draws.mid, draws.mid)
    z_reach = norms(draws.rad)
    z_error = 2 * np.sqrt(squares_z) * z_reach + z_reach**2 + gamma(p) * squares_z
    if math.isfinite(envelope.eta):
        gap = v - y_mid[envelope_rows]
        squares = np.einsum("kp,kp->k", gap, gap)
        both = norms(v_rad + y_rad[envelope_rows])
        quadratic = squares / (2 * envelope.eta)
        quadratic_error = (
            (2 * np.sqrt(squares) * both + both**2 + gamma(p) * squares) / (2 * envelope.eta) * (1 + 4 * ROUNDOFF)
        )
    else:
        quadratic = quadratic_error = np.zeros(len(v))
    floor = envelope.floor[envelope_rows]
    d_mid = at.value + quadratic - floor - squares_z / 2
    d_rad = (
        at.error
        + slope * reach
        + energy.curvature * reach**2 / 2
        + quadratic_error
        + z_error / 2
        + 8 * ROUNDOFF * (np.abs(at.value) + quadratic + np.abs(floor) + squares_z / 2)
    ) * GROW
    e_mid, e_rad = laplace_fast(uniforms << 1, 1.0)
    verdict = np.full(len(v), -1, dtype=np.int64)
    verdict[e_mid - e_rad > d_mid + d_rad] = 1
    verdict[e_mid + e_rad < d_mid - d_rad] = 0
    return v, v_rad, verdict


class RejectionSampler:
    """The chains of one call: their energy, history, ideal bits and the exact coins."""

    def __init__(self, energy: Energy, rng: np.random.Generator, history: History) -> None:
        self.energy, self.rng, self.history = energy, rng, history
        # The bits beyond a uniform's first 53 come from a stream of their own: deciding a coin exactly
        # leaves every later draw as it was (the tests compare runs with and without exact decisions).
        self.bits = UniformBits(own_generator(rng))
        self.serials = 0
        self.proposals = 0  # looked at, in all (reads the data: never released)

    def exact_coin(
        self, envelope: Envelope, row: int, step: int, serial: int, cells: NDArray[np.int64], uniform: int
    ) -> bool:
        """Whether E = −ln U exceeds the exact D of chain ``row``'s proposal at ``step``: decided at doubling
        precision (``resolve``)."""
        p, history = self.energy.p, self.history

        def enclose(precision: int) -> Interval | None:
            u = history.state(self.bits, row, step, p, precision) if history.start is not None or step else None
            y = history.proposal_centre(self.bits, row, step, u, p, precision)
            z = _exact_vector(self.bits, ("z", serial), cells, p, precision)
            if y is None or z is None:
                return None
            v = _affine(envelope.offset[row], (envelope.mix, y), (envelope.spread, z))
            point = [(value.lo + value.hi) / 2 for value in v]
            radius = sum((((value.hi - value.lo) / 2) ** 2 for value in v), Decimal(0)).sqrt().next_plus()
            energy = self.energy.exact(point, radius, precision)
            terms = [energy, negate(exact(float(envelope.floor[row])))]
            if math.isfinite(envelope.eta):
                gap = [add(a, negate(b)) for a, b in zip(v, y)]
                squares = add(*[multiply(g, g) for g in gap])
                terms.append(multiply(squares, exact(Fraction(1) / (2 * Fraction(envelope.eta)))))
            terms.append(negate(multiply(add(*[multiply(a, a) for a in z]), exact(Fraction(1, 2)))))
            unit = laplace_exact(self.bits, ("u", serial), uniform << 1, precision)
            return None if unit is None else add(unit, negate(add(*terms)))

        def decide(lo: Fraction, hi: Fraction) -> bool | None:
            if lo > 0:
                return True
            return False if hi < 0 else None

        return resolve(enclose, decide)

    def oracle_step(
        self,
        envelope: Envelope,
        rows: int,
        step: int,
        y_mid: NDArray[np.float64],
        y_rad: NDArray[np.float64],
        failure: float,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
        """One exact draw per chain from the envelope's target: proposals until one is kept, at most
        ⌈log(1/failure)/A⌉ per chain (A its certified acceptance rate), else ``AccFirstError`` (probability ≤ failure).

        Returns the kept proposals' midpoints, radii, cells and serial numbers.
        """
        p = self.energy.p
        rates = np.exp(envelope.log_acceptance)
        caps = np.ceil(math.log(1 / failure) / rates)
        batch = np.clip(np.ceil(2 / rates), 1, MAX_BATCH).astype(int)
        kept_mid, kept_rad = np.empty((rows, p)), np.empty((rows, p))
        kept_cells = np.empty((rows, 2, (p + 1) // 2), dtype=np.int64)
        kept_serial = np.empty(rows, dtype=np.int64)
        used = np.zeros(rows)
        pending = np.arange(rows)
        while pending.size:
            size = int(batch[pending].max())
            draws = IdealGaussians(self.rng, pending.size * size, p)
            uniforms = uniform_cells(self.rng, pending.size * size)
            owners = np.repeat(pending, size)
            v, v_rad, verdict = _coin_fast(self.energy, envelope, owners, y_mid, y_rad, draws, uniforms)
            serials = self.serials + np.arange(owners.size)
            self.serials += owners.size
            still = []
            for i, row in enumerate(pending.tolist()):
                found = False
                for k in range(size):
                    if used[row] >= caps[row]:
                        break
                    used[row] += 1
                    index = i * size + k
                    keep = bool(verdict[index]) if verdict[index] >= 0 else None
                    if keep is None:
                        keep = self.exact_coin(
                            envelope, row, step, int(serials[index]), draws.cells[:, index], int(uniforms[index])
                        )
                    if keep:
                        kept_mid[row], kept_rad[row] = v[index], v_rad[index]
                        kept_cells[row], kept_serial[row] = draws.cells[:, index], serials[index]
                        found = True
                        break
                if found:
                    continue
                if used[row] >= caps[row]:
                    raise AccFirstError(
                        "the Gibbs posterior's certified sampler rejected every proposal it may make (an event of "
                        f"probability below {failure:.2g}, counted in the run's δ); run it again"
                    )
                still.append(row)
            pending = np.array(still, dtype=np.int64)
        self.proposals += int(used.sum())
        return kept_mid, kept_rad, kept_cells, kept_serial


def log_det_bound(excess: NDArray[np.float64], eta: float, c: float) -> float:
    """An upper bound on ½ log det(c·∇²F) with ∇²F ⪯ (1 + 4·2⁻⁵³)(I + Σ/(4λ)) + I/η (η = ∞: no I/η)."""
    extra = 1 / eta if math.isfinite(eta) else 0.0
    return 0.5 * float(np.sum(np.log(c * ((1 + 4 * ROUNDOFF) * (1 + excess) + extra)))) * (1 + 4 * ROUNDOFF) + 1e-12
