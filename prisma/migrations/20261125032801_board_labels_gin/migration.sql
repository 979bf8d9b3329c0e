-- CreateIndex
CREATE INDEX "Board_labels_idx" ON "Board" USING GIN ("labels" jsonb_path_ops);
