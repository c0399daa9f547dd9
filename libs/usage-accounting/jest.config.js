module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'usage-accounting',
  rootDir: __dirname,
};
