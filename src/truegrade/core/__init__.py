"""The contracts every other part of truegrade is written against.

``Sample`` (what is graded), ``Grade`` (the verdict and its reasons), ``Grader`` (anything with
``grade_batch``), composition, ``load_grader``, and the one way a user's file is opened
(``read_text``, ``read_config``, ``open_file``, ...: every problem is a one-line
``DataError``). The core imports nothing above it: built-in graders are found by name through the
registry and imported only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from truegrade._exports import lazy_exports

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

_HOME = {
    "AllOf": "truegrade.core._compose",
    "Ensemble": "truegrade.core._compose",
    "Gate": "truegrade.core._compose",
    "WeightedSum": "truegrade.core._compose",
    "DataError": "truegrade.core._errors",
    "EngineError": "truegrade.core._errors",
    "OutputError": "truegrade.core._errors",
    "SpecError": "truegrade.core._errors",
    "TruegradeError": "truegrade.core._errors",
    "describe_validation_error": "truegrade.core._errors",
    "check_file": "truegrade.core._files",
    "decode_utf8": "truegrade.core._files",
    "open_file": "truegrade.core._files",
    "parse_json": "truegrade.core._files",
    "read_config": "truegrade.core._files",
    "read_json": "truegrade.core._files",
    "read_text": "truegrade.core._files",
    "read_yaml": "truegrade.core._files",
    "require_fields": "truegrade.core._files",
    "Flag": "truegrade.core._grade",
    "Grade": "truegrade.core._grade",
    "GRADER_FAMILIES": "truegrade.core._grader",
    "AsyncGrader": "truegrade.core._grader",
    "BaseGrader": "truegrade.core._grader",
    "Grader": "truegrade.core._grader",
    "SampleLike": "truegrade.core._grader",
    "grade_rows": "truegrade.core._grader",
    "run_grader": "truegrade.core._grader",
    "run_grader_async": "truegrade.core._grader",
    "GSM8K_FINAL_LINE": "truegrade.core._presets",
    "PRESET_NAMES": "truegrade.core._presets",
    "PRESETS": "truegrade.core._presets",
    "Preset": "truegrade.core._presets",
    "apply_preset": "truegrade.core._presets",
    "columns_of": "truegrade.core._presets",
    "detect_preset": "truegrade.core._presets",
    "gsm8k_final_answer": "truegrade.core._presets",
    "preset_named": "truegrade.core._presets",
    "without_calculator_marks": "truegrade.core._presets",
    "GraderFactory": "truegrade.core._registry",
    "describe_grader": "truegrade.core._registry",
    "grader_names": "truegrade.core._registry",
    "load_grader": "truegrade.core._registry",
    "read_config_file": "truegrade.core._registry",
    "register_grader": "truegrade.core._registry",
    "Content": "truegrade.core._sample",
    "Message": "truegrade.core._sample",
    "Sample": "truegrade.core._sample",
    "distinct_items": "truegrade.core._sample",
    "message_text": "truegrade.core._sample",
    "to_samples": "truegrade.core._sample",
}
"""Where each name lives: its module is imported when the name is first read, so importing
the package (as every worker process does, for the one kernel it runs) costs nothing."""

__getattr__, __dir__ = lazy_exports(globals(), _HOME)
