// Each test of this suite may take up to 180 s (it starts the three apps as processes).
jest.setTimeout(180_000);
