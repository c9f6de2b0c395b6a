"""Views a researcher reads: run reports, the graph view, explain pages, the ontology view."""
