"""LangGraph workflows (citewise-rag, citewise-agentic): state, nodes, prompts and citations."""
