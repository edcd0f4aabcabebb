"""ELMo Search web UI: Streamlit pages over an ``indexer.Index``; ``python -m app`` builds the demo and serves it."""
