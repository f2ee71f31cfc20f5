"""The shared sidebar: which data, prepared how, and λ — and what a page runs on.

``app.py``'s frame calls ``dataset_sidebar()`` on every run, before the page; pages call
``selection()`` (or ``require_selection()``) to get a ``Selection``: the prepared
data, λ, the cached problem and a ``DatasetSpec`` for the reproduction snippet.

Built-in datasets are public: their prepared data and problems are shared between
sessions with ``st.cache_resource`` (read-only objects). An uploaded file is hashed
by content and everything derived from it stays in this session's ``session_memo``;
it is never written to disk nor put in a cache another session could read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from accfirst import Problem, SearchOptions
from accfirst.datasets import BUILTIN_DATASETS, PreparedData, UploadLimits, load_builtin, read_upload
from accfirst.datasets.prepare.noise import SecretSeed
from accfirst.datasets.prepared import EVALUATION_MODE, EXCLUDES_PREPARATION
from accfirst.erm.problems import PROBLEMS, prepared_problem
from accfirst.erm.shape import validate_radius
from accfirst.errors import AccFirstError
from accfirst.interpret import preparation_note, preparation_steps
from accfirst.search.sources import BuiltinProblem
from accfirst.snippet import DatasetSpec
from accfirst.validation import shorten
from ui import memory
from ui.cache import session_memo
from ui.docs import docs_link
from ui.errors import package_errors
from ui.settings import Choice, OptionalFloat, restore_from_url, write_to_url
from ui.text import EVALUATION_ONLY, plain, short
from ui.upload import choices_key, prepared_before, prepared_upload, upload_options

UPLOAD = "upload"
DEFAULT_DATASET = "synthetic-buzz"
LAMBDA_OPTIONS = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0)
# Keep in step with server.maxUploadSize in .streamlit/config.toml (MB).
MAX_UPLOAD_MB = 50
# 150 MB of table in memory: reading, preparing it and building a logistic problem take about 4× that
# at their peak (measured: +576 MB), which keeps the server under 1.5 GB with everything else it holds.
UPLOAD_LIMITS = UploadLimits(
    max_bytes=MAX_UPLOAD_MB * 1024**2, max_rows=500_000, max_columns=300, max_memory=150 * 1024**2
)
UPLOAD_TYPES = ["csv", "tsv", "txt", "parquet", "pq"]
memory.configure()  # an upload's memory goes back to the system when its session ends
STATE_KEY = "ui.selection"
PROBLEM_KEY = "ui.selection_problem"
# (task, the package's sentence) of an upload the page's target refused before it was prepared: nothing was spent.
REFUSED_KEY = "ui.refused_before_preparing"
#: What a page asks of an upload before it is prepared: from its row count and ``from_frame`` options, the sentence
#: refusing the page's target (the table is then not prepared), or ``None``.
BeforePreparing = Callable[[int, Mapping[str, Any]], str | None]
#: Which of the shared λ and size-bound settings the page's current target does not read (their URL keys), and the
#: sentence that says why: those widgets are drawn disabled, with the sentence under them.
IgnoredSettings = Callable[[], tuple[frozenset[str], str]]
# One secret per server process: the built-in real tables are prepared privately with its noise, so every worker
# process builds the same arrays while nobody outside the server can know the noise. Never shown, never in a link.
SERVER_NOISE = SecretSeed.draw()


def _dataset_label(key: str) -> str:
    if key == UPLOAD:
        return "Upload your own file…"
    info = BUILTIN_DATASETS[key]
    return f"{key} ({info.task})"


DATASET = Choice(
    scope="app",
    key="ds",
    label="Dataset",
    default=DEFAULT_DATASET,
    options=(*BUILTIN_DATASETS, UPLOAD),
    labels={key: _dataset_label(key) for key in (*BUILTIN_DATASETS, UPLOAD)},
    widget_type="selectbox",
    help="Synthetic data are generated from public parameters (preparing them is free); the real tables are "
    "prepared privately like an upload; an upload stays in your session only.",
)
LAMBDA = Choice(
    scope="app",
    key="lam",
    label="Regularisation λ (log scale)",
    default=5e-3,
    options=LAMBDA_OPTIONS,
    widget_type="select_slider",
    help="λ in L(θ) = loss + (λ/2)‖θ‖². Larger λ: smaller norm bound M = 1/√λ, so less noise is needed, "
    "but a more biased model. The paper uses λ = 0.005.",
)
RADIUS = OptionalFloat(
    scope="app",
    key="radius",
    label="Public bound on ‖θ‖ (optional)",
    default=None,
    placeholder="none",
    help="A radius R with ‖θ‖ ≤ R known before seeing the data. A smaller R than the bound M that λ implies "
    "means smaller sensitivities, so less noise and a smaller ε. It must come from domain knowledge, never "
    "from this data.",
)
RADIUS_MODE = Choice(
    scope="app",
    key="rmode",
    label="Bound on the model's size",
    default=SearchOptions.radius_mode,
    options=("private", "free", "none"),
    labels={
        "private": "private: R₀, and a tighter bound bought with a little privacy when it pays",
        "free": "R₀ only: a bound that holds for every dataset, free",
        "none": "none: M, the paper's bound (or your public bound below)",
    },
    help="The private accuracy check costs privacy in proportion to how large the model may be. R₀ bounds every "
    "model's size for free (it reads no data); the private option also buys a tighter bound with a small part of "
    "the budget when a rule that reads no data predicts it pays. A public bound below, from domain knowledge, "
    "caps both.",
)
SHARED_SETTINGS = (DATASET, LAMBDA, RADIUS_MODE, RADIUS)


@dataclass(frozen=True, eq=False)
class Selection:
    """What a page runs on: prepared data, λ and the public radius.

    Parameters
    ----------
    key : a hashable identity of the prepared data (built-in name, or the upload's content
        hash plus its preparation options); results are cached under it.
    title : for headings (plain text: show it with ``ui.text.plain``).
    data : the prepared data (docs/mathematics.md#setting-and-notation on its training part).
    spec : how to get the same data again, for the snippet and the settings JSON.
    lam : λ.
    shared : ``True`` for built-ins (public: cross-session caches allowed).
    radius : a public bound R on ‖θ‖ (docs/mathematics.md#a-public-norm-bound), or ``None``; part of the problem like λ.
    radius_mode : the ``SearchOptions.radius_mode`` the sidebar chose (docs/mathematics.md#a-private-radius); not part
    of the problem.
    """

    key: tuple[Hashable, ...]
    title: str
    data: PreparedData
    spec: DatasetSpec
    lam: float
    shared: bool
    radius: float | None = None
    radius_mode: str = SearchOptions.radius_mode

    @property
    def task(self) -> str:
        return self.data.task

    @property
    def problem_key(self) -> tuple[Hashable, ...]:
        """What the problem depends on: the prepared data, λ and the radius (a key for anything derived from it)."""
        return (*self.key, self.lam, self.radius)

    @property
    def source(self) -> BuiltinProblem:
        """How the worker pool rebuilds this built-in problem (a real table with the server's secret noise)."""
        return builtin_source(self.spec.builtin, self.lam, self.radius)

    def problem(self) -> Problem:
        """The ERM problem on the training part at λ and R (cached; raises the package's errors)."""
        if self.shared:
            return builtin_problem(self.spec.builtin, self.lam, self.radius)
        return session_memo(
            "problems",
            self.problem_key,
            lambda: prepared_problem(self.data, self.lam, self.radius),
            max_entries=1,
        )


def builtin_noise(name: str) -> SecretSeed | None:
    """The noise a built-in table is prepared with here: ``SERVER_NOISE`` for a real one, none for a synthetic one."""
    return None if BUILTIN_DATASETS[name].public else SERVER_NOISE


def builtin_source(name: str, lam: float, radius: float | None = None) -> BuiltinProblem:
    """How a worker process builds a built-in problem: with the same noise as this process."""
    return BuiltinProblem(name, lam, radius, builtin_noise(name))


@st.cache_resource(show_spinner=False, max_entries=4)
def builtin_data(name: str) -> PreparedData:
    """A built-in dataset, prepared once per server (a real table privately, with ``SERVER_NOISE``; read-only)."""
    return load_builtin(name, noise_seed=builtin_noise(name))


@st.cache_resource(show_spinner=False, max_entries=16)
def builtin_problem(name: str, lam: float, radius: float | None = None) -> Problem:
    """The problem of a built-in dataset at λ (and public radius R), built once per server."""
    data = builtin_data(name)
    return prepared_problem(data, lam, radius)


def selection() -> Selection | None:
    """The sidebar's current selection (``None`` while an upload is missing or invalid)."""
    return st.session_state.get(STATE_KEY)


def refused_before_preparing() -> tuple[str, str] | None:
    """(task, sentence) when the page's target refused the upload before its preparation (nothing spent), else
    ``None``."""
    refused: tuple[str, str] | None = st.session_state.get(REFUSED_KEY)
    return refused


def require_selection() -> Selection:
    """The current selection, or an explanation and ``st.stop()``."""
    chosen = selection()
    if chosen is None:
        problem = st.session_state.get(PROBLEM_KEY)
        if problem:
            st.error(plain(f"The data cannot be used yet: {problem}"), icon="🚫")
            st.info("Change the data settings in the sidebar (☰ on a phone) to continue.", icon="👈")
        else:
            st.info("Choose a dataset in the sidebar (or finish the upload there) to see results.", icon="👈")
        st.stop()
    return chosen


def dataset_sidebar(
    sidebar: Any,
    *,
    linked: bool = True,
    before_preparing: BeforePreparing | None = None,
    ignored: IgnoredSettings | None = None,
) -> Selection | None:
    """Draw the shared sidebar (dataset, upload flow, λ) in ``sidebar`` and remember the selection for the page.

    ``linked``: the settings go into the URL (not on a page that does not run on the data, whose links stay short).
    ``before_preparing``: the page's check of an upload before it is prepared (``BeforePreparing``).
    ``ignored``: the settings the page's target does not read (``IgnoredSettings``): drawn disabled, and a size bound
    it does not read is neither checked nor passed on.
    """
    st.session_state[STATE_KEY] = None
    st.session_state[PROBLEM_KEY] = None
    st.session_state[REFUSED_KEY] = None
    restore_from_url(SHARED_SETTINGS)
    unused, why = ignored() if ignored is not None else (frozenset(), "")
    sidebar.header("Data")
    name = DATASET.widget(sidebar)
    lam = float(LAMBDA.widget(sidebar, disabled=LAMBDA.key in unused))
    radius_mode = RADIUS_MODE.widget(sidebar, disabled=RADIUS_MODE.key in unused)
    docs_link(sidebar, "charts", "why-checking-accuracy-costs-privacy", label="Why a size bound saves privacy")
    radius = RADIUS.widget(sidebar, disabled=RADIUS.key in unused)
    if why:
        sidebar.caption(why)
    if RADIUS.key in unused:
        radius = None
    if linked:
        write_to_url(SHARED_SETTINGS)
    chosen: Selection | None = None
    if radius is not None:
        sidebar.warning(
            "The bound must come from domain knowledge, never from this data: a bound read off the data is "
            "not private.",
            icon="⚠️",
        )
        docs_link(sidebar, "mathematics", "a-public-norm-bound", label="What a public norm bound does")
    if name == UPLOAD:
        chosen = _upload_flow(sidebar, lam, radius, before_preparing)
    else:
        with package_errors(sidebar, stop=False, remember=PROBLEM_KEY):
            info = BUILTIN_DATASETS[name]
            chosen = Selection(
                key=("builtin", name),
                title=info.title,
                data=builtin_data(name),
                spec=DatasetSpec.from_builtin(name),
                lam=lam,
                shared=True,
                radius=radius,
            )
            sidebar.caption(info.title)
    if chosen is not None and (message := radius_problem(radius, chosen.task, lam)):
        sidebar.error(message)
        st.session_state[PROBLEM_KEY] = message
        chosen = None
    if chosen is not None:
        chosen = replace(chosen, radius_mode=radius_mode)
    st.session_state[STATE_KEY] = chosen
    return chosen


def radius_problem(radius: float | None, task: str, lam: float) -> str | None:
    """Why a public radius cannot be used with this task and λ, or ``None`` (docs/mathematics.md#a-public-norm-bound: 0
    < R ≤ M)."""
    if radius is None:
        return None
    problem = PROBLEMS[task]
    bound, formula = problem.implied_norm_bound(lam), problem.bound_formula
    if radius <= 0:
        return f"The public bound on ‖θ‖ must be > 0; got {radius:g}. Leave it blank for none."
    if radius > bound:
        return (
            f"The public bound on ‖θ‖ ({radius:g}) is above M = {formula} = {bound:.4g}, the bound λ = {lam:g} "
            "already implies: it would loosen nothing. Give a bound ≤ M, or leave it blank."
        )
    try:
        validate_radius(radius, bound)
    except AccFirstError as error:
        return f"The public bound on ‖θ‖ cannot be used: {error}."
    return None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _upload_flow(
    sidebar: Any, lam: float, radius: float | None, before_preparing: BeforePreparing | None
) -> Selection | None:
    """File → table → declared metadata and preparation choices → the page's check → ``PreparedData``; errors shown
    next to the controls."""
    uploaded = sidebar.file_uploader(
        f"CSV or Parquet file (up to {MAX_UPLOAD_MB} MB)",
        type=UPLOAD_TYPES,
        key="app.upload_file",
        help="Read in memory and kept in your session only: never written to disk, never shared.",
    )
    if uploaded is None:
        sidebar.info("Upload a table with a header row: one column to predict, feature columns of numbers or text.")
        return None
    content = uploaded.getvalue()
    digest = _digest(content)
    frame: pd.DataFrame | None = None
    with package_errors(sidebar, stop=False, remember=PROBLEM_KEY):
        frame = session_memo(
            "upload_frames", digest, lambda: read_upload(content, uploaded.name, limits=UPLOAD_LIMITS), max_entries=1
        )
    if frame is None:
        return None
    options = upload_options(sidebar, frame, digest)
    if options is None:
        st.session_state[PROBLEM_KEY] = "the declared metadata has errors: see the table in the sidebar."
        return None
    if before_preparing is not None and not prepared_before(digest, options):
        refusal = before_preparing(len(frame), options)
        if refusal is not None:
            sidebar.info(
                "Not prepared: the page's target cannot be met on a table this size (see the page). Nothing was spent."
            )
            st.session_state[REFUSED_KEY] = (str(options["task"]), refusal)
            return None
    prepared: PreparedData | None = None
    with package_errors(sidebar, stop=False, remember=PROBLEM_KEY):
        prepared = prepared_upload(frame, digest, options, UPLOAD_LIMITS)
    if prepared is None:
        return None
    sidebar.caption(f"{short(uploaded.name)}: {prepared.n:,} training rows × {prepared.p} features ({prepared.task})")
    return Selection(
        key=("upload", *choices_key(digest, options)),
        title=f"Your data: {shorten(uploaded.name)}",
        data=prepared,
        spec=DatasetSpec.from_upload(uploaded.name, **options),
        lam=float(lam),
        shared=False,
        radius=radius,
    )


def show_data_report(chosen: Selection, *, expanded: bool | None = None) -> None:
    """An expander describing the data: source, shape, every preparation step with its cost, and the total."""
    data, report = chosen.data, chosen.data.report
    preparation = data.preparation
    heading = f"Data: {chosen.title} — {data.n:,} training rows × {data.p} features"
    with st.expander(plain(heading), expanded=(not chosen.shared) if expanded is None else expanded):
        if data.info is not None:
            st.markdown(data.info.description)
            st.caption(f"Source: {data.info.provenance}")
        st.markdown(
            f"**Task:** {data.task} regression · **target:** {short(data.target_name)} · "
            f"**rows:** {report.n_train:,} training (seen by the private algorithms), {report.n_test:,} test "
            "(quality figures only)"
        )
        read = report.steps[: max(len(report.steps) - len(preparation.steps) - 1, 0)]
        if read:
            st.caption(plain(" · ".join(read)))
        st.markdown(f"**Preparation, step by step** — {plain(report.steps[-1])}")
        st.dataframe(
            preparation_steps(preparation),
            hide_index=True,
            width="stretch",
            column_config={"what it did": st.column_config.TextColumn(width="large")},
        )
        if report.dropped_columns:
            st.markdown("**Columns left out**")
            st.dataframe(
                pd.DataFrame(report.dropped_columns, columns=["column", "reason"]), hide_index=True, width="stretch"
            )
        if preparation.mode == EVALUATION_MODE:
            st.warning(
                f"Every ε shown {EXCLUDES_PREPARATION}.",
                icon="ℹ️",
            )
            docs_link(st, "data", "which-steps-read-the-data")


def show_preparation_note(where: Any, data: PreparedData, runs: int | None = None, *, included: bool = True) -> None:
    """Under a page's ε figures: what they include of the data's preparation (``interpret.preparation_note``).

    An evaluation-only preparation is a visible warning (every ε excludes it); otherwise a caption.
    """
    note = preparation_note(data.preparation.mode, data.prep_epsilon, data.prep_delta, runs, included=included)
    if data.preparation.mode == EVALUATION_MODE:
        where.warning(note, icon="⚠️")
    elif note:
        where.caption(note)


def show_radius_notice(problem: Problem) -> None:
    """Say when a public radius cuts off the data's unconstrained optimum (docs/mathematics.md#a-public-norm-bound;
    evaluation only)."""
    if problem.radius is None or not problem.radius_binds:
        return
    st.info(
        f"The unconstrained optimum has ‖θ‖ = {problem.unconstrained_norm:.4g}, outside the public bound "
        f"R = {problem.radius:g}. θ* and every private model are the best inside that ball, and the excess risk is "
        f"measured against that θ*; a bound this tight costs accuracy on this data. {EVALUATION_ONLY}",
        icon="🔎",
    )
