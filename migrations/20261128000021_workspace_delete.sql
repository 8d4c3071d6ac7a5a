-- A deleted workspace keeps its row (its name is not reused) and its data until purged by
-- retention; its keys are revoked and it is not found from then on (workspace.delete).
ALTER TABLE registry_workspaces ADD COLUMN deleted_at bigint;
