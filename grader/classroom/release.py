"""nbgrader preprocessor for `generate_assignment`: the released answer cell holds the broken program.

Stock ClearSolutions replaces a solution region (or a whole solution cell) with a stub such as
`# YOUR CODE HERE`. In this course the learner fixes a program that is already there, so an answer cell
made by `devcourse classroom generate` carries its released text in its metadata (`devcourse.release`);
this subclass puts it in place of the reference fix and drops the metadata. Other cells are left to
ClearSolutions. nbgrader_config.py installs it in GenerateAssignment.preprocessors instead of ClearSolutions.
"""

from __future__ import annotations

from nbgrader import utils
from nbgrader.preprocessors import ClearSolutions

META = "devcourse"


class ReleaseBrokenCode(ClearSolutions):
    def preprocess_cell(self, cell, resources, cell_index):
        meta = cell.metadata.get(META)
        if meta and "release" in meta:
            if not utils.is_solution(cell):
                raise RuntimeError(f"cell {cell_index}: a devcourse answer cell must be an nbgrader solution cell")
            cell.source = meta["release"]
            del cell.metadata[META]
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)
