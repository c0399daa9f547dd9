module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'model-catalog',
  rootDir: __dirname,
};
