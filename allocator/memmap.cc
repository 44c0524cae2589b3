// placeholder: implemented by the allocator work
