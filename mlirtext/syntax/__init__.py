"""Text to IR (grammar-driven, with error recovery) and IR to text."""
