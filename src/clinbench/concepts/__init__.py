"""Reference derivations: one SQL file per concept, a folder per domain, and the builder.

``catalog`` finds the files and reads their headers, ``graph`` orders them by the table
references in their SQL, ``build`` materialises them into a database and ``inline`` turns a
concept and everything it needs into one self-contained statement.
"""
