"""a parameter count of 0 (or below) stored before ``records.parameter_count`` made 0 unknown is unknown (NULL): a home
that stored the Hub's 0 (a repo whose safetensors hold no tensor) or a record set's kept it in SQL, so its model
page, ``taskspace models`` and the size filters said 0 parameters until the model's Hub metadata was fetched again
(up to 7 days later; never for a model without a Hub repo). Such a Hub model's metadata is asked again by the next
pass (a GGUF header or its base model sizes it where one does), and the index points of every such model are
pushed by the next pass (their point digests forgotten: ``Store.unpushed_models``), whose payload holds no size
for it (``sync._model_point``).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 22:15:00

"""
from typing import Sequence, Union

from alembic import op


revision: str = '0020'
down_revision: Union[str, Sequence[str], None] = '0019'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

#: the models whose stored count is no size
_NO_SIZE = "SELECT id FROM models WHERE num_parameters <= 0"


def upgrade() -> None:
    # before the count is cleared (the rows are found by it): their points are pushed by the next pass. Already-pushed
    # points of those models held no size since sync._model_point read 0 as none, but their stored digests were those
    # of the points written before, which held 0: without this a pass kept them, and `taskspace check` did not see it
    op.execute(f"UPDATE model_vectors SET point_digest = NULL WHERE model_id IN ({_NO_SIZE})")
    op.execute("UPDATE models SET fetched_at = NULL WHERE kind = 'hub' AND num_parameters <= 0 AND fetched_at IS NOT NULL")
    # whose count it is goes with the count (sql_records: null, the repo's own)
    op.execute("UPDATE models SET num_parameters = NULL, num_parameters_from = NULL WHERE num_parameters <= 0")


def downgrade() -> None:
    # nothing to undo: NULL is unknown to 0019's code as 0 was no size (records.parameter_count), and the counts
    # cleared are not kept to write back
    pass
