"""ovpool's native OpenVINO extension: a C++ library any OpenVINO process loads with
``core.add_extension(path)`` to run ovpool's pooling inside OpenVINO's CPU plugin without
Python. :mod:`ovpool.native.build` builds it; this package holds its sources."""
