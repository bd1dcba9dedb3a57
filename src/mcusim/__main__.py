"""`python -m mcusim`: the same command line as the `mcusim` script (for an environment whose
scripts folder is not on PATH)."""
from .launch import main

if __name__ == "__main__":
    main()
