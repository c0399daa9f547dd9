module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'llm-providers',
  rootDir: __dirname,
};
