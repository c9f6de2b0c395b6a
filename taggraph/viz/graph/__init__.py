"""The interactive graph page of one question: the page (`page.py`), its subgraph, layout, labels,
ranks, search box and HTML template."""
