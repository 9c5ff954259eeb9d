"""Mappers; importing this package registers them all."""
from . import baselines  # noqa: F401
from . import aphid  # noqa: F401
from . import ptram  # noqa: F401
from . import libtopomap  # noqa: F401
from . import kumar  # noqa: F401
from . import hierarchy  # noqa: F401
from . import scotch  # noqa: F401
