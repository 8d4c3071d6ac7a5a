-- Manual deliveries are held until delivery.flush marks them released.
ALTER TABLE deliveries ADD COLUMN released BOOLEAN NOT NULL DEFAULT false;
