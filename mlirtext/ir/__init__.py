"""The IR: operations, blocks, regions, values, types and attributes, with source spans."""
