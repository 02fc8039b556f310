"""The scenario's values: the file's shape (pydantic), its frozen spec, sections and settings."""
