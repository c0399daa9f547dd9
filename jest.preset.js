// Shared jest settings for every project: TypeScript through SWC with decorator metadata (NestJS DI),
// and the @ask/* path aliases of tsconfig.base.json.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias}$`] = path.join(__dirname, target);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testMatch: ['**/?(*.)+(spec|test).ts'],
};
