import sys

try:
    from .cli.dispatch import console_main
except KeyboardInterrupt:  # Ctrl-C while the program loads: nothing started, nothing to say
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(console_main())
