"""The contracts every other part of truegrade is written against.

``Sample`` (what is graded), ``Grade`` (the verdict and its reasons), ``Grader`` (anything with
``grade_batch``), composition, ``load_grader``, and the one way a user's file is opened
(``read_text``, ``read_config``, ``open_file``, ...: every problem is a one-line
``DataError``). The core imports nothing above it: built-in graders are found by name through the
registry and imported only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_modules

if TYPE_CHECKING:
    from truegrade.core._compose import AllOf, Ensemble, Gate, WeightedSum
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
        read_config,
        read_json,
        read_text,
        read_yaml,
        require_fields,
    )
    from truegrade.core._grade import Flag, Grade
    from truegrade.core._grader import (
        GRADER_FAMILIES,
        AsyncGrader,
        BaseGrader,
        Grader,
        SampleLike,
        grade_rows,
        run_grader,
        run_grader_async,
    )
    from truegrade.core._presets import (
        GSM8K_FINAL_LINE,
        PRESET_NAMES,
        PRESETS,
        Preset,
        apply_preset,
        columns_of,
        detect_preset,
        gsm8k_final_answer,
        preset_named,
        without_calculator_marks,
    )
    from truegrade.core._registry import (
        GraderFactory,
        describe_grader,
        grader_names,
        load_grader,
        read_config_file,
        register_grader,
    )
    from truegrade.core._sample import (
        Content,
        Message,
        Sample,
        distinct_items,
        message_text,
        to_samples,
    )

__all__ = [
    "GRADER_FAMILIES",
    "GSM8K_FINAL_LINE",
    "PRESETS",
    "PRESET_NAMES",
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
    "Preset",
    "Sample",
    "SampleLike",
    "SpecError",
    "TruegradeError",
    "WeightedSum",
    "apply_preset",
    "check_file",
    "columns_of",
    "decode_utf8",
    "describe_grader",
    "describe_validation_error",
    "detect_preset",
    "distinct_items",
    "grade_rows",
    "grader_names",
    "gsm8k_final_answer",
    "load_grader",
    "message_text",
    "open_file",
    "parse_json",
    "preset_named",
    "read_config",
    "read_config_file",
    "read_json",
    "read_text",
    "read_yaml",
    "register_grader",
    "require_fields",
    "run_grader",
    "run_grader_async",
    "to_samples",
    "without_calculator_marks",
]

_HOMES = {
    "truegrade.core._compose": (
        "AllOf",
        "Ensemble",
        "Gate",
        "WeightedSum",
    ),
    "truegrade.core._errors": (
        "DataError",
        "EngineError",
        "OutputError",
        "SpecError",
        "TruegradeError",
        "describe_validation_error",
    ),
    "truegrade.core._files": (
        "check_file",
        "decode_utf8",
        "open_file",
        "parse_json",
        "read_config",
        "read_json",
        "read_text",
        "read_yaml",
        "require_fields",
    ),
    "truegrade.core._grade": (
        "Flag",
        "Grade",
    ),
    "truegrade.core._grader": (
        "GRADER_FAMILIES",
        "AsyncGrader",
        "BaseGrader",
        "Grader",
        "SampleLike",
        "grade_rows",
        "run_grader",
        "run_grader_async",
    ),
    "truegrade.core._presets": (
        "GSM8K_FINAL_LINE",
        "PRESET_NAMES",
        "PRESETS",
        "Preset",
        "apply_preset",
        "columns_of",
        "detect_preset",
        "gsm8k_final_answer",
        "preset_named",
        "without_calculator_marks",
    ),
    "truegrade.core._registry": (
        "GraderFactory",
        "describe_grader",
        "grader_names",
        "load_grader",
        "read_config_file",
        "register_grader",
    ),
    "truegrade.core._sample": (
        "Content",
        "Message",
        "Sample",
        "distinct_items",
        "message_text",
        "to_samples",
    ),
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_modules(globals(), _HOMES)
