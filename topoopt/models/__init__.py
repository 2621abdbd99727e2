"""pydantic types only: catalog items, the instance, designs and results. No solver imports."""

from topoopt.models.catalog import Catalog
from topoopt.models.design import Design, SolveResult, Violation
from topoopt.models.instance import Instance
from topoopt.models.performance import Performance

__all__ = ["Catalog", "Design", "Instance", "Performance", "SolveResult", "Violation"]
