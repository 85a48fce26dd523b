"""nbgrader's CheckCellMetadata with the same checks, done faster: the cell metadata schema's validator is built
once per run instead of once per cell.

nbgrader validates each cell's nbgrader metadata with `jsonschema.validate`, which first checks the schema itself
against JSON Schema's meta-schema, on every call: with the two CheckCellMetadata steps of autograde, that was
about a third of the converter's own CPU time per submission (cProfile, 12 exercises a notebook). Here the
validator is made once; the errors raised are the same (jsonschema's best match, nbgrader's schema-version
errors), and nbgrader's own checks of the notebook (unique grade ids, points, ...) run unchanged."""

from __future__ import annotations

import traceback

import jsonschema
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

_VALIDATORS: dict[int, object] = {}  # by schema version


class _ValidatorBuiltOnce(BaseMetadataValidator):
    """The base class's cell validation, with a validator made once for the schema."""

    def validate_cell(self, cell) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None or meta.get("schema_version", 0) != self.schema_version:
            return super().validate_cell(cell)  # nothing to check, or nbgrader's own schema-version error
        if self.schema_version not in _VALIDATORS:
            cls = jsonschema.validators.validator_for(self.schema)
            cls.check_schema(self.schema)  # once, where jsonschema.validate does it on every call
            _VALIDATORS[self.schema_version] = cls(self.schema)
        error = jsonschema.exceptions.best_match(_VALIDATORS[self.schema_version].iter_errors(meta))
        if error is not None:
            raise error


class _Validator(MetadataValidator, _ValidatorBuiltOnce):
    """nbgrader's current validator; its call to the base class's validate_cell reaches _ValidatorBuiltOnce."""


class CheckCellMetadataOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata (same checks, same messages), with _Validator."""

    def preprocess(self, nb, resources):
        try:
            _Validator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from None
        return nb, resources
