"""Alembic migrations, shipped inside the package so ``gpu-tracker db upgrade`` works
from an installed wheel as well as from a checkout."""
