//! Several replicas behind nginx, configured from the shipped files.
