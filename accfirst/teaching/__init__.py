"""The mechanisms of the lecture slides *Differential Privacy for Machine Learning*, corrected as
docs/mathematics.md#teaching-mechanisms says.

Pure numbers for the Learn pages: randomized response (``randomized_response``), the
Laplace mechanism on counts (``laplace``), composition, group privacy and
post-processing (``composition``), and the in-memory registry of live classroom polls
(``poll``). Nothing here reads private data or imports Streamlit.
"""

from accfirst.teaching.composition import (
    advanced_composition,
    basic_composition,
    dp_to_zcdp,
    group_privacy,
    replace_one_from_add_remove,
    threshold_release,
    zcdp_composition,
    zcdp_to_dp,
)
from accfirst.teaching.laplace import (
    integer_noise_loss,
    integer_noise_pmf,
    laplace_density,
    laplace_privacy_loss,
    laplace_variance,
    max_error_probability,
    max_error_threshold,
)
from accfirst.teaching.poll import AnswerRefused, PollRooms, PollSnapshot, parse_room_code
from accfirst.teaching.randomized_response import TWO_COINS, Misfit, RandomizedResponse

__all__ = [
    "TWO_COINS",
    "AnswerRefused",
    "Misfit",
    "PollRooms",
    "PollSnapshot",
    "RandomizedResponse",
    "advanced_composition",
    "basic_composition",
    "dp_to_zcdp",
    "group_privacy",
    "integer_noise_loss",
    "integer_noise_pmf",
    "laplace_density",
    "laplace_privacy_loss",
    "laplace_variance",
    "max_error_probability",
    "max_error_threshold",
    "parse_room_code",
    "replace_one_from_add_remove",
    "threshold_release",
    "zcdp_composition",
    "zcdp_to_dp",
]
