"""The exit codes of every command (DESIGN): 0 ok; 1 a check, diff or scan found something; 2 bad input."""

EXIT_OK, EXIT_DIFFERENT, EXIT_BAD_INPUT = 0, 1, 2
