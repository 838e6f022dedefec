"""The evaluation harness's pure logic (numpy only, no I/O): :mod:`.splits` (in-sample, leave one group out),
:mod:`.metrics` (the paper's metrics), :mod:`.contestants` (what is compared: the solver, kNN and the best source
performer behind one interface), :mod:`.protocol` (run folds, aggregate), :mod:`.report` (text tables),
:mod:`.plots` (PNGs). The I/O (reading data, encoding) is :mod:`indexer.evaluate`."""
