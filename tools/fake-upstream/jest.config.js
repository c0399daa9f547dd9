module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'fake-upstream',
  rootDir: __dirname,
};
