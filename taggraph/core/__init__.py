"""The paper's representation: notes (`notes.py`), the 5W+Extra record (`fivew.py`), the tag ontology
(`ontology.py`), the tag-topic-file graph (`graph.py`), the store of one history (`store.py`) and the one
tokenizer (`text.py`)."""
