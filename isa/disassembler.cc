// placeholder until the ISA implementation lands
