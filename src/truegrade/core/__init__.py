"""The contracts every other part of truegrade is written against.

``Sample`` (what is graded), ``Grade`` (the verdict and its reasons), ``Grader`` (anything with
``grade_batch``), composition, ``load_grader``, and the one way a user's file is opened
(``read_text``, ``read_config``, ``open_file``, ...: every problem is a one-line
``DataError``). The core imports nothing above it: built-in graders are found by name through the
registry and imported only when asked for.
"""

from truegrade.core._compose import AllOf, Ensemble, Gate, WeightedSum, part_name
from truegrade.core._errors import (
    DataError,
    EngineError,
    OutputError,
    SpecError,
    TruegradeError,
    describe_validation_error,
)
from truegrade.core._files import (
    check_file,
    decode_utf8,
    open_file,
    parse_json,
    read_bytes,
    read_config,
    read_json,
    read_text,
    read_yaml,
    require_fields,
)
from truegrade.core._grade import Flag, Grade
from truegrade.core._grader import (
    AsyncGrader,
    BaseGrader,
    Grader,
    SampleLike,
    run_grader,
    run_grader_async,
)
from truegrade.core._registry import (
    GraderFactory,
    grader_names,
    load_grader,
    read_config_file,
    register_grader,
)
from truegrade.core._sample import Content, Message, Sample, message_text, to_sample, to_samples

__all__ = [
    "AllOf",
    "AsyncGrader",
    "BaseGrader",
    "Content",
    "DataError",
    "EngineError",
    "Ensemble",
    "Flag",
    "Gate",
    "Grade",
    "Grader",
    "GraderFactory",
    "Message",
    "OutputError",
    "Sample",
    "SampleLike",
    "SpecError",
    "TruegradeError",
    "WeightedSum",
    "check_file",
    "decode_utf8",
    "describe_validation_error",
    "grader_names",
    "load_grader",
    "message_text",
    "open_file",
    "parse_json",
    "part_name",
    "read_bytes",
    "read_config",
    "read_config_file",
    "read_json",
    "read_text",
    "read_yaml",
    "register_grader",
    "require_fields",
    "run_grader",
    "run_grader_async",
    "to_sample",
    "to_samples",
]
